// MaestroList finds SimGrid 3.32's list of maestro's activities and keeps comms off it, and the
// comms still run to their hand-computed end. This process owns its one SimGrid engine.
#include "engine/maestro_list.h"

#include <gtest/gtest.h>
#include <simgrid/version.h>

#include <simgrid/s4u.hpp>
#include <vector>

#include "platforms/simgrid_platform.h"

namespace orrery {
namespace {

namespace sg4 = simgrid::s4u;

TEST(MaestroList, EvictsCommsThatStillRunToTheirEnd) {
  int argc = 1;
  char name[] = "maestro_list_test";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  apply_network_config();  // plain max-min, as the replay runs it
  auto* zone = sg4::create_full_zone("z");
  sg4::Host* a = zone->create_host("a", 1e9);
  sg4::Host* b = zone->create_host("b", 1e9);
  sg4::Link* l = zone->create_link("l", 1e9)->set_latency(0)->seal();
  zone->add_route(a->get_netpoint(), b->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(l)},
                  true);
  zone->seal();

  // Comms are created the way the replay creates them: in a callback, in maestro's context.
  MaestroList list;
  std::vector<sg4::CommPtr> comms;
  sg4::ExecPtr kick = sg4::Exec::init()->set_flops_amount(1e9)->set_host(a);
  sg4::Activity::on_completion_cb([&](sg4::Activity const& done) {
    if (&done != kick.get()) return;
    for (int i = 0; i < 3; ++i) {
      sg4::CommPtr c = list.create([&] { return sg4::Comm::sendto_init(a, b); });
      c->set_payload_size(1000000000);
      c->detach();
      comms.push_back(c);
    }
  });
  kick->start();
  engine.run();

  EXPECT_EQ(list.on(), SIMGRID_VERSION_MAJOR == 3 && SIMGRID_VERSION_MINOR == 32);
  ASSERT_EQ(comms.size(), 3u);
  for (const auto& c : comms) EXPECT_EQ(c->get_remaining(), 0.0);
  // 1 s of compute, then three 1 GB flows sharing a 1 GB/s link: 3 s.
  EXPECT_NEAR(sg4::Engine::get_clock(), 4.0, 1e-6);
}

}  // namespace
}  // namespace orrery
