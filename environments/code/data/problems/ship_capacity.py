TITLE = "Shipping Within D Days"
DIFFICULTY = "medium"
TAGS = ["binary search"]
STATEMENT = """
Packages with weights w_1 .. w_n must be shipped in the given order within D days. Each day
the ship carries a contiguous run of the remaining packages whose total weight does not
exceed its capacity. What is the smallest capacity that ships everything within D days?

Input: the first line contains n and D. The second line contains the weights.
Output: one integer.
Constraints: 1 <= D <= n <= 5000, 1 <= w_i <= 10^5.
"""
PUBLIC = ["10 5\n1 2 3 4 5 6 7 8 9 10\n", "4 2\n3 2 2 4\n"]


def hidden(rng):
    def case(n, d, hi):
        return f"{n} {d}\n{' '.join(str(rng.randint(1, hi)) for _ in range(n))}\n"
    tests = ["1 1\n7\n", "3 3\n1 50 1\n", "5 5\n5 4 3 2 1\n", "3 1\n1 2 3\n", "4 3\n1 1 1 100\n",
             "6 4\n1 2 100 2 1 1\n", case(20, 7, 50), case(200, 199, 1000), case(1000, 10, 10**5)]
    return tests + [case(5000, 4000, 10**5), case(5000, 17, 10**5)]


REF_PY = r'''
n, d = map(int, input().split())
w = list(map(int, input().split()))
def days(cap):
    used, load = 1, 0
    for x in w:
        if load + x > cap:
            used += 1
            load = 0
        load += x
    return used
lo, hi = max(w), sum(w)
while lo < hi:
    mid = (lo + hi) // 2
    if days(mid) <= d:
        hi = mid
    else:
        lo = mid + 1
print(lo)
'''
REF_CPP = r'''
#include <algorithm>
#include <cstdio>
#include <vector>
std::vector<long long> w;
int days(long long cap) {
    int used = 1; long long load = 0;
    for (long long x : w) { if (load + x > cap) { used++; load = 0; } load += x; }
    return used;
}
int main() {
    int n, d; scanf("%d %d", &n, &d); w.resize(n);
    long long lo = 0, hi = 0;
    for (auto& x : w) { scanf("%lld", &x); lo = std::max(lo, x); hi += x; }
    while (lo < hi) { long long mid = (lo + hi) / 2; if (days(mid) <= d) hi = mid; else lo = mid + 1; }
    printf("%lld\n", lo);
}
'''
WRONG_PY = r'''
n, d = map(int, input().split())
w = list(map(int, input().split()))
def days(cap):
    used, load = 1, 0
    for x in w:
        if load + x > cap:
            used += 1
            load = 0
        load += x
    return used
lo, hi = 1, sum(w)
while lo < hi:
    mid = (lo + hi) // 2
    if days(mid) <= d:
        hi = mid
    else:
        lo = mid + 1
print(lo)
'''
