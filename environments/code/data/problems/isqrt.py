TITLE = "Integer Square Root"
DIFFICULTY = "easy"
TAGS = ["binary search", "math"]
STATEMENT = """
For each of q integers x, print the largest integer r with r*r <= x.

Input: the first line contains q. Each of the next q lines contains x.
Output: q lines.
Constraints: 1 <= q <= 1000, 0 <= x <= 10^18.
"""
PUBLIC = ["3\n16\n17\n0\n", "1\n1000000\n"]


def hidden(rng):
    big = [10**18, 10**18 - 1, 999999999999999999, (10**9) ** 2 - 1, (10**9 - 1) ** 2,
           (999999999) ** 2 + 999999999 * 2, 4503599761588224, 2**53 + 1, 2**59]
    tests = ["1\n1\n", "2\n2\n3\n", "1\n15\n"]
    tests += [f"1\n{x}\n" for x in big[:6]]
    tests.append(f"{len(big)}\n" + "\n".join(map(str, big)) + "\n")
    vals = [rng.randint(0, 10**18) for _ in range(500)] + [rng.randint(10**9 - 5, 10**9) ** 2 - rng.randint(0, 1) for _ in range(500)]
    return tests + [f"1000\n" + "\n".join(map(str, vals)) + "\n"]


REF_PY = r'''
import sys
from math import isqrt
d = sys.stdin.read().split()
print("\n".join(str(isqrt(int(x))) for x in d[1:1 + int(d[0])]))
'''
REF_CPP = r'''
#include <cstdio>
int main() {
    int q; scanf("%d", &q);
    while (q--) {
        unsigned long long x; scanf("%llu", &x);
        unsigned long long lo = 0, hi = 1000000001ULL;
        while (hi - lo > 1) {
            unsigned long long mid = (lo + hi) / 2;
            if (mid * mid <= x) lo = mid; else hi = mid;
        }
        printf("%llu\n", lo);
    }
}
'''
WRONG_PY = r'''
import sys, math
d = sys.stdin.read().split()
print("\n".join(str(int(math.sqrt(int(x)))) for x in d[1:1 + int(d[0])]))
'''
