/* The shared library's own translation unit: everything else comes from the
 * stridemem_engine archive (linked whole); the version script picks sm_*. */
#include "stridemem.h"
