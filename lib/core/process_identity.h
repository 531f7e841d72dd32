// Who this process is among its peers, read once at start with the settings (load_config()): the
// host name and the launcher's rank. Snapshots, output names (%h, %r) and live readings all use
// these, so one run never names itself two ways.
#pragma once

namespace vramtrace {

// gethostname() at start; "" when it failed.
const char *host_name();
// The rank from the launcher's environment at start: RANK, else SLURM_PROCID, else
// OMPI_COMM_WORLD_RANK, else PMI_RANK; "" when none is set (or set empty). At most 63 bytes.
const char *launcher_rank();

void load_process_identity(); // called by load_config()

} // namespace vramtrace
