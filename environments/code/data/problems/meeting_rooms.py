TITLE = "Meeting Rooms"
DIFFICULTY = "medium"
TAGS = ["sorting", "greedy"]
STATEMENT = """
There are n meetings; meeting i occupies a room during the half-open interval [s_i, e_i).
A meeting that ends at time t and one that starts at time t can use the same room. What is
the minimum number of rooms needed to hold all meetings?

Input: the first line contains n. Each of the next n lines contains s_i and e_i.
Output: one integer.
Constraints: 1 <= n <= 5000, 0 <= s_i < e_i <= 10^9.
"""
PUBLIC = ["3\n0 30\n5 10\n15 20\n", "2\n1 3\n4 6\n"]


def hidden(rng):
    def case(n, span, maxlen):
        rows = []
        for _ in range(n):
            s = rng.randint(0, span)
            rows.append(f"{s} {s + rng.randint(1, maxlen)}")
        return f"{n}\n" + "\n".join(rows) + "\n"
    tests = ["1\n0 1\n", "2\n1 5\n5 9\n", "3\n1 2\n2 3\n3 4\n", "3\n0 10\n0 10\n0 10\n",
             "4\n1 4\n4 7\n2 4\n4 6\n", case(10, 20, 5), case(100, 100, 10), case(500, 1000, 50),
             case(1000, 10**9 - 10**6, 10**6)]
    return tests + [case(4000, 10**9 - 10**8, 10**8)]


REF_PY = r'''
import sys
data = list(map(int, sys.stdin.read().split()))
n = data[0]
events = []
for i in range(n):
    s, e = data[1 + 2 * i], data[2 + 2 * i]
    events.append((s, 1))
    events.append((e, -1))
events.sort()
cur = best = 0
for _, d in events:
    cur += d
    best = max(best, cur)
print(best)
'''
REF_CPP = r'''
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>
int main() {
    int n; scanf("%d", &n);
    std::vector<std::pair<long long, int>> ev;
    for (int i = 0; i < n; i++) {
        long long s, e; scanf("%lld %lld", &s, &e);
        ev.push_back({s, 1}); ev.push_back({e, -1});
    }
    std::sort(ev.begin(), ev.end());
    int cur = 0, best = 0;
    for (auto& p : ev) { cur += p.second; best = std::max(best, cur); }
    printf("%d\n", best);
}
'''
WRONG_PY = r'''
import sys
data = list(map(int, sys.stdin.read().split()))
n = data[0]
events = []
for i in range(n):
    s, e = data[1 + 2 * i], data[2 + 2 * i]
    events.append((s, -1))
    events.append((e, 1))
events.sort()
cur = best = 0
for _, d in events:
    cur -= d
    best = max(best, cur)
print(best)
'''
