TITLE = "Climbing Stairs"
DIFFICULTY = "easy"
TAGS = ["dp"]
STATEMENT = """
You climb a staircase of n steps, taking 1, 2 or 3 steps at a time. In how many ways can you
reach the top? Print the answer modulo 1000000007.

Input: one integer n.
Output: one integer.
Constraints: 1 <= n <= 10^5.
"""
PUBLIC = ["3\n", "5\n"]


def hidden(rng):
    return [f"{n}\n" for n in (1, 2, 4, 10, 36, 37, 50, 1000, rng.randint(2000, 50000), 99999)] + ["100000\n"]


REF_PY = r'''
n = int(input())
MOD = 10**9 + 7
a, b, c = 1, 0, 0
for _ in range(n):
    a, b, c = (a + b + c) % MOD, a, b
print(a)
'''
REF_CPP = r'''
#include <cstdio>
int main() {
    int n; scanf("%d", &n);
    const long long MOD = 1000000007;
    long long a = 1, b = 0, c = 0;
    for (int i = 0; i < n; i++) { long long na = (a + b + c) % MOD; c = b; b = a; a = na; }
    printf("%lld\n", a);
}
'''
WRONG_PY = r'''
n = int(input())
a, b, c = 1, 0, 0
for _ in range(n):
    a, b, c = a + b + c, a, b
print(a % (2**31 - 1) if a >= 2**31 else a)
'''
