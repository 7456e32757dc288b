/*
 * An empty program, for what starting one costs (bench/slurm.sh): built as start_curl, linked
 * with libcurl (and so every library Debian's libcurl needs), and as start_plain, linked with
 * jansson only, as gpupool is linked with both. It calls one function of its library so that the
 * library is needed, and exits.
 */
#ifdef GP_START_CURL
#include <curl/curl.h>
#else
#include <jansson.h>
#endif

int main(void)
{
#ifdef GP_START_CURL
    return curl_version() ? 0 : 1;
#else
    json_t *j = json_object();
    int rc = j ? 0 : 1;
    json_decref(j);
    return rc;
#endif
}
