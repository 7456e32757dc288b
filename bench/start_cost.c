/*
 * An empty program, for what starting one costs (bench/slurm.sh): built as start_curl, linked
 * with libcurl (and so every library Debian's libcurl needs), and as start_plain, linked with
 * jansson only, as gpupool is linked with both. It takes the address of one function of its
 * library, so that the library is needed and its symbol bound at start, and calls nothing: the
 * measure is the loading alone.
 */
#ifdef GP_START_CURL
#include <curl/curl.h>
static char *(*volatile fn)(void) = curl_version;
#else
#include <jansson.h>
static json_t *(*volatile fn)(void) = json_object;
#endif

int main(void)
{
    return fn ? 0 : 1;
}
