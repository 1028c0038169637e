TITLE = "Subarrays with Sum K"
DIFFICULTY = "medium"
TAGS = ["prefix sums", "hashing"]
STATEMENT = """
Count the non-empty contiguous subarrays of a_1 .. a_n whose sum equals k. Elements may be
negative.

Input: the first line contains n and k. The second line contains the array.
Output: one integer.
Constraints: 1 <= n <= 5000, -1000 <= a_i <= 1000, -10^6 <= k <= 10^6.
"""
PUBLIC = ["5 5\n1 4 2 3 5\n", "3 2\n1 1 1\n"]


def hidden(rng):
    def case(n, k, lo, hi):
        return f"{n} {k}\n{' '.join(str(rng.randint(lo, hi)) for _ in range(n))}\n"
    tests = ["1 0\n0\n", "3 0\n0 0 0\n", "4 0\n1 -1 1 -1\n", "3 -2\n-1 -1 -1\n", "1 5\n4\n",
             "5 3\n3 -3 3 -3 3\n", case(20, 2, -2, 2), case(200, 0, -3, 3), case(1000, 10, -5, 10)]
    return tests + [case(5000, 7, -20, 20)]


REF_PY = r'''
n, k = map(int, input().split())
seen = {0: 1}
s = total = 0
for x in map(int, input().split()):
    s += x
    total += seen.get(s - k, 0)
    seen[s] = seen.get(s, 0) + 1
print(total)
'''
REF_CPP = r'''
#include <cstdio>
#include <unordered_map>
int main() {
    int n; long long k; scanf("%d %lld", &n, &k);
    std::unordered_map<long long, long long> seen; seen[0] = 1;
    long long s = 0, total = 0;
    for (int i = 0; i < n; i++) {
        long long x; scanf("%lld", &x); s += x;
        auto it = seen.find(s - k);
        if (it != seen.end()) total += it->second;
        seen[s]++;
    }
    printf("%lld\n", total);
}
'''
WRONG_PY = r'''
n, k = map(int, input().split())
a = list(map(int, input().split()))
lo = s = total = 0
for hi in range(n):
    s += a[hi]
    while s > k and lo <= hi:
        s -= a[lo]
        lo += 1
    if s == k and lo <= hi:
        total += 1
print(total)
'''
