#include "ctl/high.h"
