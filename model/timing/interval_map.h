// IntervalMap: a value per half-open key range, covering only the ranges something touched.
// The timing model nests two of them (partitions -> byte ranges -> last writer and reader) to
// find exactly which earlier instances an access overlaps. Pieces split at range boundaries on
// update, so their number stays near the number of distinct boundaries the accesses use.
#pragma once

#include <iterator>
#include <map>

namespace ncv {
inline namespace timing {

template <class Key, class Value>
class IntervalMap {
 public:
  // Calls f(const Value&) for every piece overlapping [b, e), in key order.
  template <class F>
  void visit(Key b, Key e, F&& f) const {
    if (!(b < e)) return;
    auto it = pieces_.upper_bound(b);
    if (it != pieces_.begin() && std::prev(it)->second.end > b) --it;
    for (; it != pieces_.end() && it->first < e; ++it) f(it->second.value);
  }

  // Calls f(Value&) for pieces exactly covering [b, e): pieces straddling b or e are split (both
  // halves keep the value), gaps get a default-constructed Value.
  template <class F>
  void update(Key b, Key e, F&& f) {
    if (!(b < e)) return;
    split(b);
    split(e);
    Key cur = b;
    auto it = pieces_.lower_bound(b);
    while (cur < e) {
      if (it == pieces_.end() || cur < it->first) {
        const Key gap_end = it == pieces_.end() || e < it->first ? e : it->first;
        it = pieces_.emplace_hint(it, cur, Piece{gap_end, Value{}});
      }
      f(it->second.value);
      cur = it->second.end;
      ++it;
    }
  }

  size_t pieces() const { return pieces_.size(); }

 private:
  struct Piece {
    Key end;
    Value value;
  };

  void split(Key pos) {
    auto it = pieces_.upper_bound(pos);
    if (it == pieces_.begin()) return;
    --it;
    if (it->first < pos && pos < it->second.end) {
      Piece right = it->second;
      it->second.end = pos;
      pieces_.emplace_hint(std::next(it), pos, std::move(right));
    }
  }

  std::map<Key, Piece> pieces_;  // begin -> piece; disjoint
};

}  // namespace timing
}  // namespace ncv
