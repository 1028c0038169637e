TITLE = "Pairs with Given Sum"
DIFFICULTY = "easy"
TAGS = ["two pointers", "hashing"]
STATEMENT = """
Count the pairs of indices i < j with a_i + a_j = S.

Input: the first line contains n and S. The second line contains n integers.
Output: one integer.
Constraints: 1 <= n <= 5000, -10^5 <= a_i <= 10^5, -2*10^5 <= S <= 2*10^5.
"""
PUBLIC = ["5 6\n1 5 2 4 3\n", "3 100\n1 2 3\n"]


def hidden(rng):
    def case(n, s, lo, hi):
        return f"{n} {s}\n{' '.join(str(rng.randint(lo, hi)) for _ in range(n))}\n"
    tests = ["1 2\n1\n", "2 2\n1 1\n", "4 4\n2 2 2 2\n", "5 0\n0 0 0 1 -1\n", "6 7\n3 4 3 4 3 4\n",
             case(20, 4, 0, 4), case(100, 0, -5, 5), case(1000, 10, 0, 10), case(2000, 37, -100, 100)]
    return tests + [case(5000, 0, -50, 50)]


REF_PY = r'''
from collections import Counter
n, s = map(int, input().split())
seen = Counter()
total = 0
for x in map(int, input().split()):
    total += seen[s - x]
    seen[x] += 1
print(total)
'''
REF_CPP = r'''
#include <cstdio>
#include <map>
int main() {
    int n; long long s; scanf("%d %lld", &n, &s);
    std::map<long long, long long> seen; long long total = 0;
    for (int i = 0; i < n; i++) {
        long long x; scanf("%lld", &x);
        auto it = seen.find(s - x);
        if (it != seen.end()) total += it->second;
        seen[x]++;
    }
    printf("%lld\n", total);
}
'''
WRONG_PY = r'''
n, s = map(int, input().split())
vals = set(map(int, input().split()))
print(sum(1 for x in vals if s - x in vals and x < s - x))
'''
