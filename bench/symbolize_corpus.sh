#!/usr/bin/env bash
# bench/symbolize_corpus.sh OUT [UNITS]: writes and builds a large -O2 -g
# C++ program for bench/symbolize_compare.sh: UNITS translation units
# (default 64), each with its own types, so each instantiates its own
# std::vector, std::map, std::unordered_map, std::sort, std::function and
# lambdas, and most of its code is inline chains. Prints the binary's path.
set -euo pipefail
out=$1
units=${2:-64}
mkdir -p "$out/src"

for ((i = 0; i < units; i++)); do
  cat > "$out/src/unit$i.cpp.new" <<CPP
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

namespace corpus$i {

struct Item {
  int id;
  double weight;
  std::string name;
};

template <typename T>
struct Stats {
  T sum{};
  T largest{};
  void add(T v) {
    sum += v;
    largest = std::max(largest, v);
  }
};

std::vector<Item> make_items(int n) {
  std::vector<Item> items;
  for (int k = 0; k < n; ++k) items.push_back({k, k * 0.5 + $i, "item" + std::to_string(k * ($i + 1))});
  return items;
}

std::map<std::string, std::vector<Item>> group(const std::vector<Item>& items) {
  std::map<std::string, std::vector<Item>> groups;
  for (const Item& item : items) groups[item.name.substr(0, 5)].push_back(item);
  return groups;
}

double score(std::vector<Item> items) {
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.weight * $((i + 3)) < b.weight; });
  Stats<double> stats;
  std::for_each(items.begin(), items.end(), [&](const Item& item) { stats.add(item.weight); });
  std::unordered_map<int, std::string> names;
  for (const Item& item : items) names.emplace(item.id % 97, item.name);
  std::function<double(const Item&)> weigh = [&](const Item& item) { return item.weight + names.size(); };
  const double total = std::accumulate(items.begin(), items.end(), 0.0,
                                       [&](double acc, const Item& item) { return acc + weigh(item); });
  auto it = std::find_if(items.begin(), items.end(), [](const Item& item) { return item.id % $((i + 7)) == 1; });
  return total + stats.largest + (it != items.end() ? it->weight : 0.0);
}

}  // namespace corpus$i

double run$i(int n) {
  const auto items = corpus$i::make_items(n);
  return corpus$i::score(items) + static_cast<double>(corpus$i::group(items).size());
}
CPP
  # Keep an unchanged file's timestamp, so make rebuilds nothing.
  if cmp -s "$out/src/unit$i.cpp.new" "$out/src/unit$i.cpp"; then rm "$out/src/unit$i.cpp.new"; else mv "$out/src/unit$i.cpp.new" "$out/src/unit$i.cpp"; fi
done

{
  echo "#include <cstdio>"
  for ((i = 0; i < units; i++)); do echo "double run$i(int n);"; done
  echo "int main(int argc, char**) {"
  echo "  double total = 0;"
  for ((i = 0; i < units; i++)); do echo "  total += run$i(argc * 100);"; done
  echo "  std::printf(\"%f\\n\", total);"
  echo "}"
} > "$out/src/main.cpp"

{
  echo "CXXFLAGS = -O2 -g"
  echo -n "OBJS ="
  for ((i = 0; i < units; i++)); do echo -n " unit$i.o"; done
  echo " main.o"
  echo "corpus: \$(OBJS)"
  echo "	g++ -o \$@ \$(OBJS)"
  echo "%.o: src/%.cpp"
  echo "	g++ \$(CXXFLAGS) -c -o \$@ \$<"
} > "$out/Makefile"
make -s -C "$out" -j2 corpus >&2
echo "$out/corpus"
