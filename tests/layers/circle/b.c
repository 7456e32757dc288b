#include "ctl/b.h"
#include "ctl/a.h"
