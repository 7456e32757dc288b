#include "cli/k8s.h"
#include "net/yaml_json.h"
#include "tests/unit/harness.h"
int main(void) { return 0; }
