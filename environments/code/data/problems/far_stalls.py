TITLE = "Spread Out the Sensors"
DIFFICULTY = "medium"
TAGS = ["binary search", "greedy"]
STATEMENT = """
There are n free positions on a line at distinct coordinates x_i. Place k sensors on k of
them so that the smallest distance between two sensors is as large as possible. Print that
distance.

Input: the first line contains n and k. The second line contains the n coordinates.
Output: one integer.
Constraints: 2 <= k <= n <= 5000, 0 <= x_i <= 10^9, all distinct.
"""
PUBLIC = ["5 3\n1 2 8 4 9\n", "4 3\n0 3 6 9\n"]


def hidden(rng):
    def case(n, k, hi):
        xs = rng.sample(range(hi + 1), n)
        return f"{n} {k}\n{' '.join(map(str, xs))}\n"
    tests = ["2 2\n0 1000000000\n", "2 2\n5 6\n", "3 2\n1 5 3\n", "5 5\n1 2 3 4 5\n", "4 2\n10 0 7 3\n",
             case(10, 4, 50), case(100, 2, 1000), case(500, 37, 10**6), case(1000, 999, 10**9)]
    return tests + [case(5000, 1234, 10**9)]


REF_PY = r'''
n, k = map(int, input().split())
x = sorted(map(int, input().split()))
def fits(d):
    count, last = 1, x[0]
    for v in x[1:]:
        if v - last >= d:
            count += 1
            last = v
    return count >= k
lo, hi = 0, x[-1] - x[0]
while lo < hi:
    mid = (lo + hi + 1) // 2
    if fits(mid):
        lo = mid
    else:
        hi = mid - 1
print(lo)
'''
REF_CPP = r'''
#include <algorithm>
#include <cstdio>
#include <vector>
int n, k; std::vector<long long> x;
bool fits(long long d) {
    int count = 1; long long last = x[0];
    for (int i = 1; i < n; i++) if (x[i] - last >= d) { count++; last = x[i]; }
    return count >= k;
}
int main() {
    scanf("%d %d", &n, &k); x.resize(n);
    for (auto& v : x) scanf("%lld", &v);
    std::sort(x.begin(), x.end());
    long long lo = 0, hi = x[n - 1] - x[0];
    while (lo < hi) { long long mid = (lo + hi + 1) / 2; if (fits(mid)) lo = mid; else hi = mid - 1; }
    printf("%lld\n", lo);
}
'''
WRONG_PY = r'''
n, k = map(int, input().split())
x = sorted(map(int, input().split()))
def fits(d):
    count, last = 1, x[0]
    for v in x[1:]:
        if v - last >= d:
            count += 1
            last = v
    return count >= k
lo, hi = 0, x[-1] - x[0] - 1
while lo < hi:
    mid = (lo + hi + 1) // 2
    if fits(mid):
        lo = mid
    else:
        hi = mid - 1
print(lo)
'''
