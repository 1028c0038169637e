TITLE = "Shortest Heavy Segment"
DIFFICULTY = "medium"
TAGS = ["two pointers"]
STATEMENT = """
Given positive integers a_1 .. a_n and S, find the length of the shortest contiguous segment
whose sum is at least S. Print 0 if no segment qualifies.

Input: the first line contains n and S. The second line contains the array.
Output: one integer.
Constraints: 1 <= n <= 10^4, 1 <= a_i <= 10^4, 1 <= S <= 10^9.
"""
PUBLIC = ["6 7\n2 3 1 2 4 3\n", "3 4\n1 4 4\n"]


def hidden(rng):
    def case(n, s, hi):
        return f"{n} {s}\n{' '.join(str(rng.randint(1, hi)) for _ in range(n))}\n"
    tests = ["1 5\n5\n", "1 6\n5\n", "3 100\n1 2 3\n", "4 10\n1 2 3 4\n", "5 11\n1 2 3 4 5\n",
             case(20, 30, 10), case(100, 1000, 30), case(1000, 10**9, 10**4), case(1000, 50000, 100)]
    return tests + [case(10**4, 10**6, 10**4), case(10**4, 10**5, 50)]


REF_PY = r'''
n, s = map(int, input().split())
a = list(map(int, input().split()))
lo = cur = 0
best = n + 1
for hi, x in enumerate(a):
    cur += x
    while cur >= s:
        best = min(best, hi - lo + 1)
        cur -= a[lo]
        lo += 1
print(best if best <= n else 0)
'''
REF_CPP = r'''
#include <algorithm>
#include <cstdio>
#include <vector>
int main() {
    int n; long long s; scanf("%d %lld", &n, &s);
    std::vector<long long> a(n);
    for (auto& x : a) scanf("%lld", &x);
    int lo = 0, best = n + 1; long long cur = 0;
    for (int hi = 0; hi < n; hi++) {
        cur += a[hi];
        while (cur >= s) { best = std::min(best, hi - lo + 1); cur -= a[lo++]; }
    }
    printf("%d\n", best <= n ? best : 0);
}
'''
WRONG_PY = r'''
n, s = map(int, input().split())
a = list(map(int, input().split()))
lo = cur = 0
best = n
for hi, x in enumerate(a):
    cur += x
    while cur >= s:
        best = min(best, hi - lo + 1)
        cur -= a[lo]
        lo += 1
print(best)
'''
