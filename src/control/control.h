// control.h - the control layer's API: its declarations are public, include/physid/control.h
#include "physid/control.h"
