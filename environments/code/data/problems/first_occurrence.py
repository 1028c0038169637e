TITLE = "First Occurrence"
DIFFICULTY = "easy"
TAGS = ["binary search"]
STATEMENT = """
Given a non-decreasing array a_1 .. a_n and q queries x, print for each query the smallest
index i (1-based) with a_i = x, or -1 if x does not occur.

Input: the first line contains n and q. The second line contains the array. The third line
contains the q queries.
Output: q integers, one per line.
Constraints: 1 <= n, q <= 5000, -10^6 <= a_i, x <= 10^6.
"""
PUBLIC = ["5 3\n1 3 5 7 9\n7 1 4\n", "1 1\n5\n5\n"]


def hidden(rng):
    def case(n, q, lo, hi):
        a = sorted(rng.randint(lo, hi) for _ in range(n))
        qs = [rng.choice(a) if rng.random() < 0.6 else rng.randint(lo - 2, hi + 2) for _ in range(q)]
        return f"{n} {q}\n{' '.join(map(str, a))}\n{' '.join(map(str, qs))}\n"
    tests = ["3 2\n2 2 2\n2 3\n", "4 4\n1 1 2 2\n1 2 0 3\n", "2 1\n-5 -5\n-5\n", "5 2\n1 2 3 4 5\n0 6\n",
             case(10, 10, 0, 3), case(100, 100, -10, 10), case(1000, 1000, 0, 100), case(2000, 2000, -10**6, 10**6)]
    return tests + [case(5000, 5000, -1000, 1000), case(5000, 5000, 0, 20)]


REF_PY = r'''
import sys
from bisect import bisect_left
d = list(map(int, sys.stdin.read().split()))
n, q = d[0], d[1]
a = d[2:2 + n]
out = []
for x in d[2 + n:2 + n + q]:
    i = bisect_left(a, x)
    out.append(i + 1 if i < n and a[i] == x else -1)
print("\n".join(map(str, out)))
'''
REF_CPP = r'''
#include <algorithm>
#include <cstdio>
#include <vector>
int main() {
    int n, q; scanf("%d %d", &n, &q);
    std::vector<int> a(n);
    for (auto& x : a) scanf("%d", &x);
    while (q--) {
        int x; scanf("%d", &x);
        int i = std::lower_bound(a.begin(), a.end(), x) - a.begin();
        printf("%d\n", i < n && a[i] == x ? i + 1 : -1);
    }
}
'''
WRONG_PY = r'''
import sys
from bisect import bisect_right
d = list(map(int, sys.stdin.read().split()))
n, q = d[0], d[1]
a = d[2:2 + n]
out = []
for x in d[2 + n:2 + n + q]:
    i = bisect_right(a, x) - 1
    out.append(i + 1 if i >= 0 and a[i] == x else -1)
print("\n".join(map(str, out)))
'''
