// `orrery run`'s Campaign block: the training campaign around the step (scenario/campaign_run.h)
// as people plan one: how long, how often interrupted and why, what checkpoints and restarts
// cost, how much energy and money.
#pragma once

#include "scenario/campaign_run.h"

namespace orrery {

void print_campaign(const CampaignSetup& setup, const CampaignFigures& f);

}  // namespace orrery
