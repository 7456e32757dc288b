file(REMOVE_RECURSE
  "../bin/test_cli_output"
  "../bin/test_cli_output.pdb"
  "CMakeFiles/test_cli_output.dir/__/src/cli/output.c.o"
  "CMakeFiles/test_cli_output.dir/__/src/cli/output.c.o.d"
  "CMakeFiles/test_cli_output.dir/unit/test_cli_output.c.o"
  "CMakeFiles/test_cli_output.dir/unit/test_cli_output.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_cli_output.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
