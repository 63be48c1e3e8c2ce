// mpi.c - the command-line tool on several processes (issue 21): `mpirun -np N physid identify ...` (and sweep)
// shares every evaluation of the fit among the N processes (src/sysid/fit.c: each simulates a contiguous range of the
// trajectories, then the processes exchange the sums r'r, J'r, J'J as nodes of a tree fixed by the trajectories,
// fit.c's *Reduction*), so the result is the one process's, bit for bit, for every N. Built with Open MPI when CMake finds it (PHYS_MPI); MPI is started only when the
// process was launched by mpirun (Open MPI's or PMIx's environment), so the plain binary behaves as without MPI.
// Process 0 prints and writes every output; the others are silent (stdout and stderr to /dev/null). A process
// that dies makes mpirun end the job with a non-zero exit; the outputs are written only after the fit, through
// temporaries, so none is left behind.
#define _GNU_SOURCE   // sched_getaffinity, CPU_COUNT
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sysid.h"
#ifdef PHYS_MPI
#include <limits.h>
#include <mpi.h>
#endif

static int g_rank = 0, g_size = 1, g_started = 0;

// 1 if mpirun (Open MPI or a PMIx launcher) started this process
static int launched_by_mpirun(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL;
}

#ifdef PHYS_MPI
// physFitComm.allgather over MPI_COMM_WORLD
static int comm_allgather(void* ctx, const void* mine, void* all, size_t nbytes) {
  (void)ctx;
  if (nbytes > INT_MAX) return 0;
  return MPI_Allgather(mine, (int)nbytes, MPI_BYTE, all, (int)nbytes, MPI_BYTE, MPI_COMM_WORLD) == MPI_SUCCESS;
}

static int* g_counts;   // 2 g_size: MPI's int counts and displacements of an allgatherv (allocated once)

// physFitComm.allgatherv over MPI_COMM_WORLD, in place (MPI counts are ints: a part over 2^31 doubles fails)
static int comm_allgatherv(void* ctx, double* buf, const size_t* count, const size_t* displ) {
  (void)ctx;
  int *c = g_counts, ok = c != NULL;
  for (int p = 0; ok && p < g_size; p++) {
    ok = count[p] <= INT_MAX && displ[p] <= INT_MAX;
    if (ok) c[p] = (int)count[p], c[g_size + p] = (int)displ[p];
  }
  return ok && MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, c, c + g_size, MPI_DOUBLE, MPI_COMM_WORLD) ==
                   MPI_SUCCESS;
}

static const physFitComm g_comm_mpi = {0, 1, NULL, comm_allgather, comm_allgatherv};
static physFitComm g_comm;
#endif

int cli_mpi_start(int* argc, char*** argv) {
  if (!launched_by_mpirun()) return -1;
#ifdef PHYS_MPI
  // PMPI_Init, PMPI_Comm_rank, PMPI_Finalize (the standard's profiling names of the same functions): Ipopt's
  // sequential MUMPS (libdmumps_seq) defines stub MPI_Init, MPI_Comm_rank, MPI_Finalize and MPI_Wtime, loaded
  // before libmpi, so those four names would bind to the stubs
  if (PMPI_Init(argc, argv) != MPI_SUCCESS) {
    cli_error("mpirun: MPI_Init failed");
    return CLI_EXIT_INPUT;
  }
  g_started = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_comm = g_comm_mpi;
  g_counts = malloc(sizeof(int) * 2 * (size_t)g_size);   // (NULL: every exchange fails, the fit says so)
  g_comm.rank = g_rank, g_comm.size = g_size;
  if (g_rank > 0) {   // silent: process 0 prints and writes (an error of its own ends the job through mpirun)
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) dup2(fd, STDOUT_FILENO), dup2(fd, STDERR_FILENO), close(fd);
    cli_quiet = 1;
  }
  return -1;
#else
  (void)argc, (void)argv;
  cli_error("started by mpirun, but this physid was built without MPI (CMake found no MPI: install Debian's "
            "libopenmpi-dev and rebuild, or run physid without mpirun)");
  return CLI_EXIT_USAGE;
#endif
}

int cli_mpi_check(const char* command) {
  if (g_size <= 1 || strcmp(command, "identify") == 0 || strcmp(command, "sweep") == 0 ||
      strcmp(command, "evaluate") == 0)
    return -1;
  cli_error("%s: only identify, sweep and evaluate share their work among processes: run '%s' without mpirun (%d "
            "processes started)", command, command, g_size);
  return CLI_EXIT_USAGE;
}

const physFitComm* cli_mpi_comm(void) {
#ifdef PHYS_MPI
  return g_size > 1 ? &g_comm : NULL;
#else
  return NULL;
#endif
}

int cli_mpi_rank(void) {
  return g_rank;
}

int cli_default_threads(void) {
  cpu_set_t set;
  int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  const char* local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");   // mpirun's processes on this machine
  int n = local && atoi(local) > 0 ? cores / atoi(local) : cores;
  return n < 1 ? 1 : n > 16 ? 16 : n;
}

void cli_mpi_end(int code) {
#ifdef PHYS_MPI
  // a failed run on several processes aborts the job: MPI_Finalize would wait for a process that died or took
  // another path (mpirun then ends every process and exits non-zero)
  if (g_started && code != CLI_EXIT_OK && g_size > 1) PMPI_Abort(MPI_COMM_WORLD, code);
  if (g_started) PMPI_Finalize();
  free(g_counts);
  g_counts = NULL;
#else
  (void)code;
#endif
  g_started = 0;
}
