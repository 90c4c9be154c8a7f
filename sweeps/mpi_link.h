// The little MPI a sweep needs: point-to-point byte messages, never blocking while children
// run (a blocking receive spins a core in OpenMPI and would steal it from the simulations).
// MPI is initialized only when the process was started by mpirun or srun (OMPI_COMM_WORLD_SIZE,
// PMI_SIZE or PMIX_RANK in the environment); otherwise this is rank 0 of 1 and MPI is never
// touched.
#pragma once

#include <list>
#include <memory>
#include <string>

namespace orrery {

class MpiLink {
 public:
  static bool launched_by_mpirun();

  // Initializes MPI when launched by mpirun. Throws InputError when launched by mpirun but
  // built without MPI.
  MpiLink();
  ~MpiLink();  // waits for sends in flight, then MPI_Finalize (if initialized)
  MpiLink(const MpiLink&) = delete;
  MpiLink& operator=(const MpiLink&) = delete;

  bool active() const { return size_ > 1 || initialized_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  // Starts a non-blocking send; the bytes are kept until it completes.
  void send(int dest, int tag, std::string bytes);
  // Receives one waiting message, if any.
  bool try_receive(int* source, int* tag, std::string* bytes);
  // Ends the job on every rank (after an error on one): MPI_Abort, or exit when inactive.
  [[noreturn]] void abort(int code);
  // Leaves without MPI_Finalize, e.g. when mpirun is already tearing the job down.
  [[noreturn]] static void leave(int code);

 private:
  void reap_sends(bool wait);
  struct Pending;
  bool initialized_ = false;
  int rank_ = 0;
  int size_ = 1;
  std::list<std::unique_ptr<Pending>> pending_;
};

}  // namespace orrery
