/*
 * libyaml, loaded by the first call into it (lazylib.h): YAML output (-o yaml), manifests and
 * YAML job specs read by the CLI. One row per function the program uses.
 */
#pragma GCC visibility push(hidden)
#include <yaml.h>
#pragma GCC visibility pop

#include "cli/lazylib.h"

#include <string.h>

#ifndef GP_YAML_SONAME
#error "GP_YAML_SONAME (the soname of libyaml, e.g. libyaml-0.so.2) must be defined"
#endif

static gp_cli_lazylib yaml = {.soname = GP_YAML_SONAME};

#pragma GCC visibility push(hidden)

/* The parser: yaml_json.c. */
GP_CLI_LAZY_FN(yaml, yaml_parser_initialize, int, (yaml_parser_t * parser), (parser), 0)
GP_CLI_LAZY_VOID(yaml, yaml_parser_delete, (yaml_parser_t * parser), (parser))
GP_CLI_LAZY_VOID(yaml, yaml_parser_set_input_string,
                 (yaml_parser_t * parser, const unsigned char *input, size_t size),
                 (parser, input, size))
GP_CLI_LAZY_FN(yaml, yaml_parser_parse, int, (yaml_parser_t * parser, yaml_event_t *event),
               (parser, event), 0)
GP_CLI_LAZY_VOID(yaml, yaml_event_delete, (yaml_event_t * event), (event))

/* The emitter: output.c. */
GP_CLI_LAZY_FN(yaml, yaml_emitter_initialize, int, (yaml_emitter_t * emitter), (emitter), 0)
GP_CLI_LAZY_VOID(yaml, yaml_emitter_delete, (yaml_emitter_t * emitter), (emitter))
GP_CLI_LAZY_VOID(yaml, yaml_emitter_set_output_file, (yaml_emitter_t * emitter, FILE *file),
                 (emitter, file))
GP_CLI_LAZY_VOID(yaml, yaml_emitter_set_width, (yaml_emitter_t * emitter, int width),
                 (emitter, width))
GP_CLI_LAZY_VOID(yaml, yaml_emitter_set_unicode, (yaml_emitter_t * emitter, int unicode),
                 (emitter, unicode))
GP_CLI_LAZY_FN(yaml, yaml_emitter_emit, int, (yaml_emitter_t * emitter, yaml_event_t *event),
               (emitter, event), 0)
GP_CLI_LAZY_FN(yaml, yaml_stream_start_event_initialize, int,
               (yaml_event_t * event, yaml_encoding_t encoding), (event, encoding), 0)
GP_CLI_LAZY_FN(yaml, yaml_stream_end_event_initialize, int, (yaml_event_t * event), (event), 0)
GP_CLI_LAZY_FN(yaml, yaml_document_start_event_initialize, int,
               (yaml_event_t * event, yaml_version_directive_t *version_directive,
                yaml_tag_directive_t *tag_directives_start,
                yaml_tag_directive_t *tag_directives_end, int implicit),
               (event, version_directive, tag_directives_start, tag_directives_end, implicit), 0)
GP_CLI_LAZY_FN(yaml, yaml_document_end_event_initialize, int, (yaml_event_t * event, int implicit),
               (event, implicit), 0)
GP_CLI_LAZY_FN(yaml, yaml_scalar_event_initialize, int,
               (yaml_event_t * event, const yaml_char_t *anchor, const yaml_char_t *tag,
                const yaml_char_t *value, int length, int plain_implicit, int quoted_implicit,
                yaml_scalar_style_t style),
               (event, anchor, tag, value, length, plain_implicit, quoted_implicit, style), 0)
GP_CLI_LAZY_FN(yaml, yaml_sequence_start_event_initialize, int,
               (yaml_event_t * event, const yaml_char_t *anchor, const yaml_char_t *tag,
                int implicit, yaml_sequence_style_t style),
               (event, anchor, tag, implicit, style), 0)
GP_CLI_LAZY_FN(yaml, yaml_sequence_end_event_initialize, int, (yaml_event_t * event), (event), 0)
GP_CLI_LAZY_FN(yaml, yaml_mapping_start_event_initialize, int,
               (yaml_event_t * event, const yaml_char_t *anchor, const yaml_char_t *tag,
                int implicit, yaml_mapping_style_t style),
               (event, anchor, tag, implicit, style), 0)
GP_CLI_LAZY_FN(yaml, yaml_mapping_end_event_initialize, int, (yaml_event_t * event), (event), 0)

#pragma GCC visibility pop
