#include "sweeps/interrupt.h"

#include <csignal>

namespace orrery {
namespace {

volatile sig_atomic_t g_signal = 0;
struct sigaction g_old_int, g_old_term, g_old_hup;

void on_signal(int sig) {
  if (g_signal == 0) g_signal = sig;
}

}  // namespace

InterruptGuard::InterruptGuard() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked poll() must return so the loop sees the flag
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  sigaction(SIGHUP, &sa, &g_old_hup);  // the terminal closed, or nohup's absence
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGHUP, &g_old_hup, nullptr);
}

bool InterruptGuard::interrupted() { return g_signal != 0; }
int InterruptGuard::signal_number() { return g_signal; }

}  // namespace orrery
