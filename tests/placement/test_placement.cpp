// Placement: --pin parsing, the placement plans on this machine and on hand-built topologies,
// and pinning a forked child.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../support/child_processes.hpp"
#include "macrostep/placement/placement.hpp"

namespace {

using macrostep::placement::bind_current_process;
using macrostep::placement::check_usable;
using macrostep::placement::current_affinity;
using macrostep::placement::format_pu_list;
using macrostep::placement::group_request;
using macrostep::placement::parse_pin;
using macrostep::placement::PinPolicy;
using macrostep::placement::PinRequest;
using macrostep::placement::plan_placement;
using macrostep::placement::ProcessingUnit;
using macrostep::placement::Topology;
using V = std::vector<unsigned>;
using Entries = std::vector<V>;

// `packages` x `cores` x `threads`; OS indices numbered like Linux on x86: the first hardware
// thread of every core first (0 .. packages*cores-1), then the second threads.
Topology synthetic(unsigned packages, unsigned cores, unsigned threads) {
  std::vector<ProcessingUnit> pus;
  for (unsigned p = 0; p < packages; ++p) {
    for (unsigned c = 0; c < cores; ++c) {
      for (unsigned t = 0; t < threads; ++t) {
        const unsigned core = p * cores + c;
        pus.push_back({p, core, t * packages * cores + core, p});
      }
    }
  }
  return Topology::from_pus(pus);
}

std::string message_of(std::string_view text) {
  try {
    parse_pin(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(PlacementParsePin, Policies) {
  EXPECT_EQ(parse_pin("none").policy, PinPolicy::kNone);
  EXPECT_EQ(parse_pin("compact").policy, PinPolicy::kCompact);
  EXPECT_EQ(parse_pin("scatter").policy, PinPolicy::kScatter);
  EXPECT_EQ(parse_pin(" scatter ").policy, PinPolicy::kScatter);
}

TEST(PlacementParsePin, Lists) {
  const PinRequest r = parse_pin("0,2,4-7");
  EXPECT_EQ(r.policy, PinPolicy::kList);
  EXPECT_EQ(r.list, (V{0, 2, 4, 5, 6, 7}));
  EXPECT_EQ(r.to_string(), "0,2,4-7");
  EXPECT_EQ(parse_pin("3").list, V{3});
  EXPECT_EQ(parse_pin("5,1, 3").list, (V{5, 1, 3}));  // order is kept
  EXPECT_EQ(parse_pin("2-2").list, V{2});
}

TEST(PlacementParsePin, BadValuesNameTheBadPart) {
  EXPECT_NE(message_of("bogus").find("'bogus'"), std::string::npos) << message_of("bogus");
  EXPECT_NE(message_of("bogus").find("compact"), std::string::npos);
  EXPECT_NE(message_of("").find("empty"), std::string::npos);
  EXPECT_NE(message_of("0,,2").find("empty item"), std::string::npos) << message_of("0,,2");
  EXPECT_NE(message_of("0,").find("empty item"), std::string::npos);
  EXPECT_NE(message_of("7-4").find("'7-4'"), std::string::npos) << message_of("7-4");
  EXPECT_NE(message_of("1-").find("'1-'"), std::string::npos) << message_of("1-");
  EXPECT_NE(message_of("1-2-3").find("'1-2-3'"), std::string::npos) << message_of("1-2-3");
  EXPECT_NE(message_of("0,1,1").find("PU 1 is listed twice"), std::string::npos);
  EXPECT_NE(message_of("0-3,2").find("PU 2 is listed twice"), std::string::npos);
  EXPECT_NE(message_of("99999").find("out of range"), std::string::npos) << message_of("99999");
}

TEST(PlacementParsePin, Maps) {
  const PinRequest r = parse_pin("map:*/0/1/0/1/2/3");
  EXPECT_EQ(r.policy, PinPolicy::kMap);
  EXPECT_EQ(r.map, (Entries{{}, {0}, {1}, {0}, {1}, {2}, {3}}));
  EXPECT_EQ(r.to_string(), "map:*/0/1/0/1/2/3");
  // Lists and ranges per entry, blanks around entries, the order inside an entry kept.
  const PinRequest lists = parse_pin(" map: 2,3 / 4-5 /*/ 7,6 ");
  EXPECT_EQ(lists.map, (Entries{{2, 3}, {4, 5}, {}, {7, 6}}));
  EXPECT_EQ(lists.to_string(), "map:2,3/4,5/*/7,6");
  EXPECT_EQ(parse_pin("map:0-3/0-3").to_string(), "map:0-3/0-3");  // repeats across entries
  EXPECT_EQ(parse_pin("map:*").map, Entries{{}});
}

TEST(PlacementParsePin, BadMapsNameTheBadEntry) {
  EXPECT_NE(message_of("map:").find("the entry of the master (entry 1) is empty"),
            std::string::npos)
      << message_of("map:");
  EXPECT_NE(message_of("map:*//0").find("subsystem 1 (entry 2) is empty"), std::string::npos)
      << message_of("map:*//0");
  EXPECT_NE(message_of("map:*/0/").find("subsystem 2 (entry 3) is empty"), std::string::npos);
  EXPECT_NE(message_of("map:*/3-1").find("entry '3-1' of subsystem 1: range '3-1' is reversed"),
            std::string::npos)
      << message_of("map:*/3-1");
  EXPECT_NE(message_of("map:*/0/1-").find("entry '1-' of subsystem 2"), std::string::npos)
      << message_of("map:*/0/1-");
  EXPECT_NE(message_of("map:0,0/1").find("entry '0,0' of the master: PU 0 is listed twice"),
            std::string::npos)
      << message_of("map:0,0/1");
  EXPECT_NE(message_of("map:*/0-2,1").find("PU 1 is listed twice"), std::string::npos);
  EXPECT_NE(message_of("map:*/x").find("'x' in item 'x' is not a PU number"), std::string::npos)
      << message_of("map:*/x");
  EXPECT_NE(message_of("map:*/*,1").find("'*'"), std::string::npos) << message_of("map:*/*,1");
  EXPECT_NE(message_of("map:*/0,").find("empty item"), std::string::npos);
  EXPECT_NE(message_of("map:*/99999").find("out of range"), std::string::npos);
  EXPECT_NE(message_of("maps:0").find("not a policy"), std::string::npos) << message_of("maps:0");
}

TEST(PlacementPlan, MapGivesEveryProcessItsEntry) {
  const Topology t = synthetic(1, 4, 1);
  // Seed 003's map: subsystems 1..6 on PUs 0 1 0 1 2 3, the master left to the OS.
  const auto map = plan_placement(t, parse_pin("map:*/0/1/0/1/2/3"), 6, 1);
  EXPECT_EQ(map.policy, PinPolicy::kMap);
  EXPECT_TRUE(map.master.empty());
  EXPECT_EQ(map.subsystems, (Entries{{0}, {1}, {0}, {1}, {2}, {3}}));
  EXPECT_EQ(map.available_pus, 4u);
  EXPECT_EQ(map.required_pus, 7u);
  EXPECT_TRUE(map.oversubscribed);
  EXPECT_NE(map.reason.find("PU 0: subsystems 1,3; PU 1: subsystems 2,4"), std::string::npos)
      << map.reason;
  EXPECT_EQ(map.reason.find("PU 2"), std::string::npos) << map.reason;  // not shared
  // Only subsystems 4 and 8 of 10 pinned: nothing is shared.
  const auto heavy = plan_placement(t, parse_pin("map:*/*/*/*/0/*/*/*/1/*/*"), 10, 1);
  EXPECT_FALSE(heavy.oversubscribed);
  EXPECT_EQ(heavy.reason, "");
  EXPECT_EQ(heavy.available_pus, 2u);
  EXPECT_EQ(heavy.subsystems[3], V{0});
  EXPECT_EQ(heavy.subsystems[7], V{1});
  for (std::size_t s : {0u, 1u, 2u, 4u, 5u, 6u, 8u, 9u}) EXPECT_TRUE(heavy.subsystems[s].empty());
}

TEST(PlacementPlan, MapWithExtraRunsSharesTheEntrysPus) {
  const Topology t = synthetic(1, 4, 1);
  const auto map = plan_placement(t, parse_pin("map:3/0,1/2"), 2, 2);
  EXPECT_EQ(map.master, V{3});
  EXPECT_EQ(map.subsystems, (Entries{{0, 1}, {2}}));
  EXPECT_TRUE(map.oversubscribed);  // subsystem 2's two runs share PU 2
  EXPECT_NE(map.reason.find("subsystem 2 runs 2 threads on 1 PU"), std::string::npos) << map.reason;
  EXPECT_EQ(map.reason.find("shared PUs"), std::string::npos) << map.reason;
  EXPECT_TRUE(plan_placement(t, parse_pin("map:3/0,1/2,0-1"), 2, 2).oversubscribed);  // 0,1 shared
  EXPECT_FALSE(plan_placement(t, parse_pin("map:3/0,1/*"), 2, 2).oversubscribed);
}

TEST(PlacementPlan, MapErrors) {
  const Topology t = synthetic(1, 4, 1);
  const auto message = [&](const char* pin, std::size_t n) -> std::string {
    try {
      plan_placement(t, parse_pin(pin), n, 1);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no exception)";
  };
  EXPECT_NE(message("map:*/0/1", 3).find("3 entries given, 4 needed"), std::string::npos)
      << message("map:*/0/1", 3);
  EXPECT_NE(message("map:*/0/1/2/3", 3).find("5 entries given, 4 needed"), std::string::npos);
  EXPECT_NE(message("map:*", 1).find("1 entry given, 2 needed"), std::string::npos);
  EXPECT_NE(message("map:*/0/4", 2).find("PU 4 is not usable"), std::string::npos)
      << message("map:*/0/4", 2);
  EXPECT_NE(message("map:*/0/4", 2).find("usable PUs: 0-3"), std::string::npos);
  // Before the count is known only the PUs are checked.
  EXPECT_NO_THROW(check_usable(t, parse_pin("map:*/0/1/2/3/0")));
  EXPECT_THROW(check_usable(t, parse_pin("map:*/0/9")), std::invalid_argument);
  EXPECT_THROW(check_usable(t, parse_pin("0,9")), std::invalid_argument);
  EXPECT_NO_THROW(check_usable(t, parse_pin("scatter")));
}

TEST(PlacementPlan, MapDescribeAndJson) {
  const Topology t = synthetic(1, 4, 1);
  const auto map = plan_placement(t, parse_pin("map:0/*/0,1/1"), 3, 1);
  const std::string text = map.describe();
  EXPECT_NE(text.find("placement --pin map:0/*/0,1/1: master + 3 subsystems x 1 PU = 4 PUs "
                      "needed, 2 in the map (oversubscribed)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("shared PUs: PU 0: master, subsystem 2; PU 1: subsystems 2,3"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  subsystem 1  not pinned\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  subsystem 2  0,1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("PU   0: 2 processes: master, subsystem 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("PU   1: 2 processes: subsystems 2,3\n"), std::string::npos) << text;
  const auto j = map.to_json();
  EXPECT_EQ(j["policy"], "map:0/*/0,1/1");
  EXPECT_EQ(j["pinned"], true);
  EXPECT_EQ(j["oversubscribed"], true);
  EXPECT_EQ(j["subsystems"][0]["pus"], nlohmann::ordered_json::array());
  EXPECT_EQ(j["not_pinned"], nlohmann::ordered_json::array({"subsystem 1"}));
  ASSERT_EQ(j["shared"].size(), 2u);
  EXPECT_EQ(j["shared"][0]["pu"], 0);
  EXPECT_EQ(j["shared"][0]["master"], true);
  EXPECT_EQ(j["shared"][0]["subsystems"], nlohmann::ordered_json::array({2}));
  EXPECT_EQ(j["shared"][1]["subsystems"], nlohmann::ordered_json::array({2, 3}));
  // Nothing pinned but subsystem 2: the master is listed as not pinned too.
  const auto one = plan_placement(t, parse_pin("map:*/*/2/*"), 3, 1).to_json();
  EXPECT_EQ(one["not_pinned"],
            nlohmann::ordered_json::array({"master", "subsystem 1", "subsystem 3"}));
  EXPECT_EQ(one["shared"], nlohmann::ordered_json::array());
}

TEST(PlacementPlan, GroupRequestTakesTheGroupsEntries) {
  const PinRequest map = parse_pin("map:0/1/2/3/*");
  EXPECT_EQ(group_request(map, {1, 3}, 4).to_string(), "map:*/2/*");
  EXPECT_EQ(group_request(map, {0}, 4).to_string(), "map:*/1");
  EXPECT_THROW(group_request(map, {0}, 3), std::invalid_argument);  // 5 entries, 4 needed
  EXPECT_THROW(group_request(map, {4}, 4), std::invalid_argument);
  EXPECT_EQ(group_request(parse_pin("0,2"), {1}, 4).to_string(), "0,2");
  EXPECT_EQ(group_request(parse_pin("compact"), {1}, 4).policy, PinPolicy::kCompact);
}

TEST(PlacementFormat, Ranges) {
  EXPECT_EQ(format_pu_list({}), "");
  EXPECT_EQ(format_pu_list({0}), "0");
  EXPECT_EQ(format_pu_list({0, 1}), "0,1");
  EXPECT_EQ(format_pu_list({0, 2, 4, 5, 6, 7}), "0,2,4-7");
  EXPECT_EQ(format_pu_list({3, 2, 1}), "3,2,1");
}

TEST(PlacementTopology, DetectsThisMachine) {
  const Topology t = Topology::detect();
  const V usable = current_affinity();
  ASSERT_EQ(t.pus.size(), usable.size());
  const V indices = t.pu_os_indices();
  const std::set<unsigned> detected(indices.begin(), indices.end());
  EXPECT_EQ(detected, std::set<unsigned>(usable.begin(), usable.end()));
  EXPECT_GE(t.cores(), 1u);
  EXPECT_LE(t.cores(), t.pus.size());
  EXPECT_GE(t.packages(), 1u);
  EXPECT_GE(t.numa_nodes(), 1u);
  EXPECT_NE(t.describe().find("PU"), std::string::npos);
  EXPECT_EQ(t.to_json()["pus"], t.pus.size());
}

TEST(PlacementTopology, HandBuiltRejectsRepeatsAndEmpty) {
  EXPECT_THROW(Topology::from_pus({}), std::invalid_argument);
  EXPECT_THROW(Topology::from_pus({{0, 0, 1, 0}, {0, 1, 1, 0}}), std::invalid_argument);
  const Topology t = synthetic(2, 4, 2);
  EXPECT_EQ(t.packages(), 2u);
  EXPECT_EQ(t.cores(), 8u);
  EXPECT_EQ(t.pus.size(), 16u);
  EXPECT_EQ(t.numa_nodes(), 2u);
}

TEST(PlacementPlan, RealMachineTwoSubsystems) {
  const Topology t = Topology::detect();
  const auto map = plan_placement(t, parse_pin("compact"), 2, 1);
  ASSERT_EQ(map.subsystems.size(), 2u);
  ASSERT_EQ(map.master.size(), 1u);
  EXPECT_EQ(map.required_pus, 3u);
  EXPECT_EQ(map.available_pus, t.pus.size());
  EXPECT_EQ(map.oversubscribed, t.pus.size() < 3);
  for (const auto& list : map.subsystems) {
    ASSERT_EQ(list.size(), 1u);
    EXPECT_TRUE(t.has_pu(list[0]));
  }
  if (t.pus.size() >= 2) {
    EXPECT_NE(map.subsystems[0], map.subsystems[1]);
  }
}

TEST(PlacementPlan, CompactKeepsTheThreadsOfACoreTogether) {
  const Topology t = synthetic(2, 4, 2);  // core 0 = PUs 0 and 8, core 1 = PUs 1 and 9, ...
  const auto map = plan_placement(t, parse_pin("compact"), 3, 2);
  EXPECT_FALSE(map.oversubscribed);
  EXPECT_EQ(map.master, V{0});
  EXPECT_EQ(map.subsystems[0], (V{8, 1}));
  EXPECT_EQ(map.subsystems[1], (V{9, 2}));
  EXPECT_EQ(map.subsystems[2], (V{10, 3}));
}

TEST(PlacementPlan, ScatterSpreadsOverPackagesThenCores) {
  const Topology t = synthetic(2, 4, 2);  // package 0: cores 0-3, package 1: cores 4-7
  const auto map = plan_placement(t, parse_pin("scatter"), 4, 1);
  EXPECT_FALSE(map.oversubscribed);
  EXPECT_EQ(map.master, V{0});         // package 0 core 0
  EXPECT_EQ(map.subsystems[0], V{4});  // package 1 core 4
  EXPECT_EQ(map.subsystems[1], V{1});  // package 0 core 1
  EXPECT_EQ(map.subsystems[2], V{5});
  EXPECT_EQ(map.subsystems[3], V{2});
  // Second hardware threads only once every core has one process.
  const auto full = plan_placement(t, parse_pin("scatter"), 8, 1);
  EXPECT_EQ(full.subsystems[6], V{7});
  EXPECT_EQ(full.subsystems[7], V{8});
}

TEST(PlacementPlan, OversubscriptionOnTwoPus) {
  const Topology t = synthetic(1, 2, 1);
  for (const std::size_t n : {2u, 8u, 32u}) {
    for (const char* policy : {"compact", "scatter", "none"}) {
      const auto map = plan_placement(t, parse_pin(policy), n, 1);
      EXPECT_TRUE(map.oversubscribed) << n << " " << policy;
      EXPECT_EQ(map.required_pus, n + 1);
      EXPECT_EQ(map.available_pus, 2u);
      EXPECT_NE(map.reason.find(std::to_string(n + 1) + " PUs"), std::string::npos) << map.reason;
      // Worker processes may host several subsystems each: the shortage counts runs, not
      // processes, which the placement does not know.
      EXPECT_EQ(map.reason.find("processes"), std::string::npos) << map.reason;
      ASSERT_EQ(map.subsystems.size(), n);
      if (std::string(policy) == "none") {
        EXPECT_TRUE(map.master.empty());
        for (const auto& list : map.subsystems) EXPECT_TRUE(list.empty());
        continue;
      }
      EXPECT_EQ(map.master, V{0});
      // Wrap-around: 1, 0, 1, 0, ...; the processes are spread evenly.
      std::size_t on_zero = 1;
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(map.subsystems[i], V{i % 2 == 0 ? 1u : 0u}) << i;
        on_zero += map.subsystems[i][0] == 0 ? 1 : 0;
      }
      EXPECT_EQ(on_zero, (n + 2) / 2);
    }
  }
  const auto one = plan_placement(t, parse_pin("compact"), 1, 1);
  EXPECT_FALSE(one.oversubscribed);
  EXPECT_TRUE(one.reason.empty());
  EXPECT_EQ(one.master, V{0});
  EXPECT_EQ(one.subsystems[0], V{1});
}

// The issue-4 defect: 2 subsystems x 2 PUs on 2 PUs used to wrap around to {1,0} and {1,0}, so
// both nominal runs were first in line for PU 1. Primaries now come first and are distinct.
TEST(PlacementPlan, TwoPusPerSubsystem) {
  const Topology t = synthetic(1, 2, 1);
  const auto map = plan_placement(t, parse_pin("compact"), 2, 2);
  EXPECT_TRUE(map.oversubscribed);
  EXPECT_EQ(map.required_pus, 5u);
  EXPECT_EQ(map.master, V{0});  // shares: 2 PUs < master + 2 primaries
  EXPECT_EQ(map.subsystems[0], (V{1, 0}));
  EXPECT_EQ(map.subsystems[1], (V{0, 1}));
  EXPECT_NE(map.reason.find("every subsystem has a primary PU of its own"), std::string::npos)
      << map.reason;
  EXPECT_NE(map.reason.find("the master shares PU 0"), std::string::npos) << map.reason;
  EXPECT_NE(map.reason.find("PU 0: master, primary of subsystem 2, extra of subsystem 1"),
            std::string::npos)
      << map.reason;
  EXPECT_NE(map.reason.find("PU 1: primary of subsystem 1, extra of subsystem 2"),
            std::string::npos)
      << map.reason;
  // More PUs per process than exist: no PU listed twice.
  const Topology single = synthetic(1, 1, 1);
  const auto narrow = plan_placement(single, parse_pin("compact"), 1, 3);
  EXPECT_EQ(narrow.subsystems[0], V{0});
  EXPECT_THROW(plan_placement(t, parse_pin("compact"), 1, 0), std::invalid_argument);
}

TEST(PlacementPlan, TwoPusOneSubsystemNoExtraRuns) {
  const auto map = plan_placement(synthetic(1, 2, 1), parse_pin("compact"), 1, 1);
  EXPECT_FALSE(map.oversubscribed);
  EXPECT_TRUE(map.reason.empty()) << map.reason;
  EXPECT_EQ(map.master, V{0});
  EXPECT_EQ(map.subsystems[0], V{1});
}

// The primaries of the subsystems, in subsystem order.
V primaries_of(const macrostep::placement::PlacementMap& map) {
  V out;
  for (const auto& list : map.subsystems) {
    EXPECT_FALSE(list.empty());
    out.push_back(list.empty() ? 9999u : list.front());
  }
  return out;
}

TEST(PlacementPlan, FourPusTwoSubsystemsWithAnExtraRun) {
  const auto map = plan_placement(synthetic(1, 4, 1), parse_pin("compact"), 2, 2);
  EXPECT_TRUE(map.oversubscribed);  // 5 PUs needed
  EXPECT_EQ(map.master, V{0});      // 4 >= master + 2 primaries: no primary on PU 0
  EXPECT_EQ(primaries_of(map), (V{1, 2}));
  EXPECT_EQ(map.subsystems[0], (V{1, 3}));  // the free PU
  EXPECT_EQ(map.subsystems[1], (V{2, 0}));  // then the master's PU, before one with a run
  EXPECT_NE(map.reason.find("the master has PU 0 without a primary"), std::string::npos)
      << map.reason;
  EXPECT_NE(map.reason.find("shared PUs: PU 0: master, extra of subsystem 2"), std::string::npos)
      << map.reason;
}

TEST(PlacementPlan, EightPusThreeSubsystemsWithAnExtraRunFit) {
  const auto map = plan_placement(synthetic(1, 8, 1), parse_pin("compact"), 3, 2);
  EXPECT_FALSE(map.oversubscribed);  // 7 <= 8
  EXPECT_TRUE(map.reason.empty()) << map.reason;
  EXPECT_EQ(map.master, V{0});
  EXPECT_EQ(map.subsystems[0], (V{1, 2}));
  EXPECT_EQ(map.subsystems[1], (V{3, 4}));
  EXPECT_EQ(map.subsystems[2], (V{5, 6}));
  std::set<unsigned> used(map.master.begin(), map.master.end());
  for (const auto& list : map.subsystems) {
    for (unsigned pu : list) EXPECT_TRUE(used.insert(pu).second) << "PU " << pu << " shared";
  }
}

// Scarce with hardware threads: compact spreads the primaries over cores before it puts two on
// the threads of one core, and an extra run goes to its primary's core when loads tie.
TEST(PlacementPlan, ScarceCompactSpreadsPrimariesOverCores) {
  const Topology t = synthetic(1, 4, 2);  // core c = PUs c and c + 4; compact order 0,4,1,5,...
  const auto map = plan_placement(t, parse_pin("compact"), 4, 2);  // 9 > 8
  EXPECT_TRUE(map.oversubscribed);
  EXPECT_EQ(map.master, V{0});
  EXPECT_EQ(primaries_of(map), (V{1, 2, 3, 4}));  // cores 1, 2, 3, then core 0's second thread
  EXPECT_EQ(map.subsystems[0], (V{1, 5}));        // the sibling of its primary
  EXPECT_EQ(map.subsystems[1], (V{2, 6}));
  EXPECT_EQ(map.subsystems[2], (V{3, 7}));
  EXPECT_EQ(map.subsystems[3], (V{4, 0}));  // the master's PU, the last one without a run
}

TEST(PlacementPlan, ScarceScatterOnTwoPackages) {
  const Topology t = synthetic(2, 2, 1);  // package 0: PUs 0, 1; package 1: PUs 2, 3
  const auto map = plan_placement(t, parse_pin("scatter"), 2, 2);  // 5 > 4; order 0,2,1,3
  EXPECT_TRUE(map.oversubscribed);
  EXPECT_EQ(map.master, V{0});
  EXPECT_EQ(map.subsystems[0], (V{2, 3}));  // primary on package 1, extra beside it
  EXPECT_EQ(map.subsystems[1], (V{1, 0}));  // package 0, extra on the master's PU
  // Three subsystems, one PU each, on 2 packages x 1 core: the master shares package 0's PU.
  const auto three = plan_placement(synthetic(2, 1, 1), parse_pin("scatter"), 3, 1);
  EXPECT_EQ(three.master, V{0});
  EXPECT_EQ(primaries_of(three), (V{1, 0, 1}));
}

TEST(PlacementPlan, ScarceExplicitListKeepsItsOrder) {
  const Topology t = synthetic(1, 8, 1);
  const auto map = plan_placement(t, parse_pin("5,3,7"), 2, 2);  // 5 > 3
  EXPECT_TRUE(map.oversubscribed);
  EXPECT_EQ(map.available_pus, 3u);
  EXPECT_EQ(map.master, V{5});
  EXPECT_EQ(map.subsystems[0], (V{3, 5}));  // the master's PU: it weighs half a run
  EXPECT_EQ(map.subsystems[1], (V{7, 3}));
  EXPECT_NE(map.reason.find("listed in --pin"), std::string::npos) << map.reason;
  EXPECT_NE(map.reason.find("the master has PU 5 without a primary"), std::string::npos)
      << map.reason;
}

TEST(PlacementPlan, TwelveSubsystemsOnTwoPusShareEvenly) {
  const Topology t = synthetic(1, 2, 1);
  for (const std::size_t m : {1u, 2u}) {
    const auto map = plan_placement(t, parse_pin("compact"), 12, m);
    EXPECT_TRUE(map.oversubscribed);
    EXPECT_EQ(map.master, V{0});
    std::size_t on[2] = {0, 0};
    for (unsigned pu : primaries_of(map)) ++on[pu];
    EXPECT_EQ(on[0], 6u) << m;
    EXPECT_EQ(on[1], 6u) << m;
    for (const auto& list : map.subsystems) EXPECT_EQ(list.size(), m);
    EXPECT_NE(map.reason.find("primary PUs are shared by up to 6 subsystems"), std::string::npos)
        << map.reason;
    EXPECT_NE(map.reason.find("PU 1: primary of subsystems 1,3,5,7,9,11"), std::string::npos)
        << map.reason;
  }
}

TEST(PlacementPlan, ListInOrderThenWrapping) {
  const Topology t = synthetic(1, 8, 1);
  const auto map = plan_placement(t, parse_pin("6,4,2"), 2, 1);
  EXPECT_FALSE(map.oversubscribed);
  EXPECT_EQ(map.available_pus, 3u);
  EXPECT_EQ(map.master, V{6});
  EXPECT_EQ(map.subsystems[0], V{4});
  EXPECT_EQ(map.subsystems[1], V{2});
  const auto wrapped = plan_placement(t, parse_pin("6,4,2"), 4, 1);
  EXPECT_TRUE(wrapped.oversubscribed);
  EXPECT_NE(wrapped.reason.find("listed in --pin"), std::string::npos) << wrapped.reason;
  EXPECT_EQ(wrapped.subsystems[2], V{6});
  EXPECT_EQ(wrapped.subsystems[3], V{4});
  try {
    plan_placement(t, parse_pin("1,9"), 1, 1);
    FAIL() << "PU 9 is not in the topology";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("PU 9"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0-7"), std::string::npos) << e.what();
  }
}

TEST(PlacementPlan, DescribeAndJson) {
  const Topology t = synthetic(1, 2, 1);
  const auto map = plan_placement(t, parse_pin("compact"), 3, 1);
  const std::string text = map.describe();
  EXPECT_NE(text.find("master"), std::string::npos) << text;
  EXPECT_NE(text.find("subsystem 3"), std::string::npos) << text;
  EXPECT_NE(text.find("oversubscribed"), std::string::npos) << text;
  const auto j = map.to_json();
  EXPECT_EQ(j["policy"], "compact");
  EXPECT_EQ(j["oversubscribed"], true);
  EXPECT_EQ(j["master"], nlohmann::ordered_json::array({0}));
  ASSERT_EQ(j["subsystems"].size(), 3u);
  EXPECT_EQ(j["subsystems"][2]["subsystem"], 3);
  EXPECT_EQ(j["subsystems"][2]["pus"], nlohmann::ordered_json::array({1}));
  const auto none = plan_placement(t, parse_pin("none"), 1, 1);
  EXPECT_EQ(none.to_json()["pinned"], false);
  EXPECT_NE(none.describe().find("not pinned"), std::string::npos);
}

// Pins a forked child to the last usable PU; the child reports what sched_getaffinity says.
TEST(PlacementBind, ForkedChildIsPinned) {
  const V usable = current_affinity();
  ASSERT_FALSE(usable.empty());
  const unsigned target = usable.back();
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = macrostep::testing::fork_tied();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    try {
      bind_current_process({target});
      const V now = current_affinity();
      code = (now == V{target}) ? 0 : 3;
    } catch (...) {
      code = 4;
    }
    (void)!::write(fds[1], &code, sizeof(code));
    ::_exit(code);
  }
  ::close(fds[1]);
  int code = -1;
  EXPECT_EQ(::read(fds[0], &code, sizeof(code)), static_cast<ssize_t>(sizeof(code)));
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(current_affinity(), usable);  // the parent is unchanged
}

TEST(PlacementBind, EmptyIsNoOpAndBadPuIsAClearError) {
  const V before = current_affinity();
  bind_current_process({});
  EXPECT_EQ(current_affinity(), before);
  try {
    bind_current_process({1000});  // < CPU_SETSIZE, but no such PU
    FAIL() << "pinning to PU 1000 should fail";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("PU 1000"), std::string::npos) << e.what();
  }
  EXPECT_EQ(current_affinity(), before);
}

}  // namespace
