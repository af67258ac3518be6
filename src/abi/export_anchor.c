/* The shared library's own translation unit: everything else comes from the
 * layer archives (the ABI's linked whole, the layers below it as it calls
 * them); the version script picks sm_*. */
#include "stridemem.h"
