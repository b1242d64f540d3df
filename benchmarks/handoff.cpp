// handoff.cpp: what handing one cache line to the other core costs, over time, without
// PyTorch or the driver. Built with the project (build/cmake/bin/openreg_handoff):
//
//     build/cmake/bin/openreg_handoff               # 60 seconds
//     build/cmake/bin/openreg_handoff --seconds 180
//
// Two threads. In short windows, taken in turn for the whole run:
//   - round trip: the threads bounce a counter between two cache lines, 5,000 times;
//   - work alone: the first thread does a small piece of host work per item (a mutex, a
//     hash-table lookup, a 256-byte memcpy: roughly what a dispatcher does), 20,000 items,
//     while the second thread sleeps;
//   - work + hand-over: the same work, and per item one 64-byte slot of a ring written the
//     way the driver's launch writes its queue slot (wait for the slot to be free, fill it,
//     publish its turn with a sequentially consistent store), while the second thread polls
//     the ring as the driver's stream worker does and frees each slot it takes.
// It sorts the windows by their round trip and prints, for each quarter of them, the medians
// in ns: the round trip, the work alone an item, and the work with the hand-over an item.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {
#if defined(__x86_64__)
#define SPIN_PAUSE() _mm_pause()  // from <immintrin.h>
#else
#define SPIN_PAUSE() std::this_thread::yield()
#endif

using Clock = std::chrono::steady_clock;

double ns_since(Clock::time_point start) {
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A slot is one cache line: its turn and the item's data, as the driver's RingSlot.
struct alignas(64) Slot {
  std::atomic<long> turn;
  long data[7];
};
constexpr long kSlots = 2048;
Slot ring[kSlots];
alignas(64) std::atomic<long> taken{0};  // items the second thread has taken

alignas(64) std::atomic<long> ping{0};
alignas(64) std::atomic<long> pong{0};
enum Role : int { kSleep, kTake, kAnswer, kExit };
alignas(64) std::atomic<int> role{kSleep};

// The second thread: sleeps, takes items from the ring, or answers the round trips.
void second_thread() {
  long pos = 0;
  for (;;) {
    int r = role.load(std::memory_order_relaxed);
    if (r == kExit) return;
    if (r == kSleep) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    } else if (r == kTake) {
      Slot& slot = ring[pos % kSlots];
      if (slot.turn.load(std::memory_order_acquire) != pos + 1) {
        SPIN_PAUSE();
        continue;
      }
      volatile long seen = slot.data[0];
      (void)seen;
      slot.turn.store(pos + kSlots, std::memory_order_release);  // free for the next lap
      taken.store(++pos, std::memory_order_release);
    } else {
      long v = ping.load(std::memory_order_acquire);
      if (v != pong.load(std::memory_order_relaxed)) pong.store(v, std::memory_order_release);
    }
  }
}

double round_trip_ns(long n) {
  role = kAnswer;
  std::this_thread::sleep_for(std::chrono::microseconds(300));
  auto start = Clock::now();
  for (long i = 1; i <= n; ++i) {
    long base = ping.load(std::memory_order_relaxed);
    ping.store(base + 1, std::memory_order_release);
    while (pong.load(std::memory_order_acquire) != base + 1) SPIN_PAUSE();
  }
  return ns_since(start) / n;
}

struct HostWork {
  std::mutex mu;
  std::unordered_map<long, long> table;
  char from[4096] = {}, to[4096] = {};
  long produced = 0;
  volatile long sink = 0;

  HostWork() {
    for (long i = 0; i < 4096; ++i) table[i * 7919] = i;
  }

  // ns an item: n items of host work, each handing a slot to the second thread if asked.
  double items(int n, bool hand_over) {
    auto start = Clock::now();
    long acc = 0;
    for (int i = 0; i < n; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu);
        acc += static_cast<long>(table.count((i * 7919L) % (4096 * 7919L)));
      }
      std::memcpy(to + (i & 1023), from + ((i * 13) & 1023), 256);
      acc += to[i & 4095];
      if (hand_over) {  // the launch: wait for the slot, fill it, publish it
        Slot& slot = ring[produced % kSlots];
        while (slot.turn.load(std::memory_order_acquire) != produced) SPIN_PAUSE();
        slot.data[0] = i;
        slot.turn.store(produced + 1);  // sequentially consistent, as the driver's
        ++produced;
      }
    }
    if (hand_over) {
      while (taken.load(std::memory_order_acquire) != produced) SPIN_PAUSE();
    }
    sink = acc;
    return ns_since(start) / n;
  }
};
}  // namespace

int main(int argc, char** argv) {
  double seconds = 60;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--seconds N]\n", argv[0]);
      return 2;
    }
  }
  if (!(seconds > 0)) {
    std::fprintf(stderr, "--seconds must be positive\n");
    return 2;
  }
  for (long i = 0; i < kSlots; ++i) ring[i].turn.store(i, std::memory_order_relaxed);
  std::thread second(second_thread);
  HostWork work;
  std::vector<double> trip, alone, handed;
  auto start = Clock::now();
  do {
    trip.push_back(round_trip_ns(5000));
    role = kTake;
    handed.push_back(work.items(20000, true));
    role = kSleep;
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    alone.push_back(work.items(20000, false));
  } while (ns_since(start) < seconds * 1e9);
  role = kExit;
  second.join();

  // Windows sorted by their round trip, in four quarters: the machine's phases show as
  // quarters whose round trips differ, and the hand-over's cost follows the round trip.
  std::vector<size_t> order(trip.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return trip[x] < trip[y]; });
  std::printf("%zu windows in %.0f s; medians of each quarter of the windows, by round trip:\n",
              trip.size(), ns_since(start) / 1e9);
  for (size_t q = 0; q < 4; ++q) {
    std::vector<double> t, a, h;
    for (size_t k = order.size() * q / 4; k < order.size() * (q + 1) / 4; ++k) {
      t.push_back(trip[order[k]]);
      a.push_back(alone[order[k]]);
      h.push_back(handed[order[k]]);
    }
    std::printf(
        "quarter %zu: round trip %.0f ns; work alone %.1f ns an item, "
        "with a slot handed over %.1f (+%.1f)\n",
        q + 1, median(t), median(a), median(h), median(h) - median(a));
  }
  return 0;
}
