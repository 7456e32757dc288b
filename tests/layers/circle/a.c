#include "ctl/a.h"
#include "ctl/b.h"
