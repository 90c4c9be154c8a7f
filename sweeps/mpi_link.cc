#include "sweeps/mpi_link.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/errors.h"

#ifdef ORRERY_HAVE_MPI
// Only the C API is linked (MPI::MPI_C): keep OpenMPI's deprecated C++ bindings out.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#endif

namespace orrery {

#ifdef ORRERY_HAVE_MPI
namespace {

// libsimgrid exports its own MPI_* functions (SMPI) and comes first in the link order, so a
// plain MPI_Init call would reach SimGrid's, which aborts outside smpirun. The functions are
// therefore looked up in the MPI library itself.
struct MpiApi {
  decltype(&MPI_Init) init;
  decltype(&MPI_Comm_rank) comm_rank;
  decltype(&MPI_Comm_size) comm_size;
  decltype(&MPI_Isend) isend;
  decltype(&MPI_Test) test;
  decltype(&MPI_Wait) wait;
  decltype(&MPI_Iprobe) iprobe;
  decltype(&MPI_Get_count) get_count;
  decltype(&MPI_Recv) recv;
  decltype(&MPI_Abort) abort;
  decltype(&MPI_Finalize) finalize;
  decltype(&MPI_Comm_set_errhandler) set_errhandler;
};

template <typename F>
void bind(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!*fn) throw std::runtime_error(std::string("MPI library lacks ") + name);
}

// The loaded MPI library ("libmpi.so.40" for OpenMPI), by its file name.
int find_libmpi(dl_phdr_info* info, size_t, void* out) {
  const char* name = info->dlpi_name;
  const char* base = name ? std::strrchr(name, '/') : nullptr;
  base = base ? base + 1 : name;
  if (base && std::strncmp(base, "libmpi.so", 9) == 0) {
    *static_cast<std::string*>(out) = name;
    return 1;
  }
  return 0;
}

const MpiApi& mpi_api() {
  static const MpiApi api = [] {
    std::string path;
    dl_iterate_phdr(find_libmpi, &path);
    if (path.empty()) throw std::runtime_error("the MPI library (libmpi.so) is not loaded");
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!lib) throw std::runtime_error("cannot open the MPI library " + path);
    MpiApi a{};
    bind(lib, "MPI_Init", &a.init);
    bind(lib, "MPI_Comm_rank", &a.comm_rank);
    bind(lib, "MPI_Comm_size", &a.comm_size);
    bind(lib, "MPI_Isend", &a.isend);
    bind(lib, "MPI_Test", &a.test);
    bind(lib, "MPI_Wait", &a.wait);
    bind(lib, "MPI_Iprobe", &a.iprobe);
    bind(lib, "MPI_Get_count", &a.get_count);
    bind(lib, "MPI_Recv", &a.recv);
    bind(lib, "MPI_Abort", &a.abort);
    bind(lib, "MPI_Finalize", &a.finalize);
    bind(lib, "MPI_Comm_set_errhandler", &a.set_errhandler);
    return a;
  }();
  return api;
}

}  // namespace
#endif

struct MpiLink::Pending {
  std::string bytes;
#ifdef ORRERY_HAVE_MPI
  MPI_Request request = MPI_REQUEST_NULL;
#endif
};

bool MpiLink::launched_by_mpirun() {
  // mpirun (Open MPI), Hydra/PMI-1 launchers, and srun --mpi=pmix.
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

MpiLink::MpiLink() {
  if (!launched_by_mpirun()) return;
#ifdef ORRERY_HAVE_MPI
  mpi_api().init(nullptr, nullptr);
  initialized_ = true;
  mpi_api().comm_rank(MPI_COMM_WORLD, &rank_);
  mpi_api().comm_size(MPI_COMM_WORLD, &size_);
  // A failed send to a rank that is going away must not abort this one (rank 0 may be saving
  // the results); mpirun ends the job anyway.
  mpi_api().set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#else
  throw InputError(
      "started by mpirun, but this orrery was built without MPI (install libopenmpi-dev and "
      "rebuild)");
#endif
}

MpiLink::~MpiLink() {
#ifdef ORRERY_HAVE_MPI
  if (!initialized_) return;
  reap_sends(true);
  mpi_api().finalize();
#endif
}

void MpiLink::reap_sends(bool wait) {
#ifdef ORRERY_HAVE_MPI
  for (auto it = pending_.begin(); it != pending_.end();) {
    int done = 0;
    if (wait)
      mpi_api().wait(&(*it)->request, MPI_STATUS_IGNORE), done = 1;
    else
      mpi_api().test(&(*it)->request, &done, MPI_STATUS_IGNORE);
    it = done ? pending_.erase(it) : std::next(it);
  }
#else
  (void)wait;
#endif
}

void MpiLink::send(int dest, int tag, std::string bytes) {
#ifdef ORRERY_HAVE_MPI
  reap_sends(false);
  auto p = std::make_unique<Pending>();
  p->bytes = std::move(bytes);
  mpi_api().isend(p->bytes.data(), static_cast<int>(p->bytes.size()), MPI_BYTE, dest, tag,
                  MPI_COMM_WORLD, &p->request);
  pending_.push_back(std::move(p));
#else
  (void)dest, (void)tag, (void)bytes;
#endif
}

bool MpiLink::try_receive(int* source, int* tag, std::string* bytes) {
#ifdef ORRERY_HAVE_MPI
  if (!initialized_) return false;
  reap_sends(false);
  int flag = 0;
  MPI_Status status;
  mpi_api().iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (!flag) return false;
  int count = 0;
  mpi_api().get_count(&status, MPI_BYTE, &count);
  bytes->assign(static_cast<size_t>(count), '\0');
  mpi_api().recv(bytes->data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  *source = status.MPI_SOURCE;
  *tag = status.MPI_TAG;
  return true;
#else
  (void)source, (void)tag, (void)bytes;
  return false;
#endif
}

void MpiLink::abort(int code) {
  std::fflush(nullptr);
#ifdef ORRERY_HAVE_MPI
  if (initialized_) mpi_api().abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

void MpiLink::leave(int code) {
  std::fflush(nullptr);
  ::_exit(code);
}

}  // namespace orrery
