#include "core/process_identity.h"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace vramtrace {
namespace {

// Fixed buffers, written once before other threads read them: the fatal-signal path reads them
// too, so they may not be std::string.
char g_host[256];
char g_rank[64];

} // namespace

const char *host_name() { return g_host; }
const char *launcher_rank() { return g_rank; }

void load_process_identity() {
    if (gethostname(g_host, sizeof g_host) != 0) g_host[0] = 0;
    g_host[sizeof g_host - 1] = 0;
    g_rank[0] = 0;
    static const char *const kNames[] = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"};
    for (const char *name : kNames) {
        const char *v = getenv(name);
        if (v == nullptr || *v == 0) continue;
        strncpy(g_rank, v, sizeof g_rank - 1);
        g_rank[sizeof g_rank - 1] = 0;
        break;
    }
}

} // namespace vramtrace
