/*
 * GET /openapi.json: the API's OpenAPI 3 document (docs/openapi.json, built into the binary by
 * cmake/embed.cmake). A test checks that it documents exactly the routes of api_routes.
 */
#include "ctl/api.h"

#include <stdlib.h>
#include <string.h>

extern const char gp_openapi_json[];
extern const unsigned long gp_openapi_json_len;

void api_openapi(api_req *rq)
{
    char *body = malloc(gp_openapi_json_len + 1);
    if (!body) {
        api_error(rq, GP_ENOMEM, "out of memory");
        return;
    }
    memcpy(body, gp_openapi_json, gp_openapi_json_len + 1);
    gp_http_response_set_body(rq->resp, 200, "application/json", body, gp_openapi_json_len);
}
