TITLE = "Range Span"
DIFFICULTY = "easy"
TAGS = ["implementation"]
STATEMENT = """
You are given n integers. Print the difference between the largest and the smallest of them.

Input: the first line contains n. The second line contains n integers a_1 .. a_n.
Output: one integer, max(a) - min(a).
Constraints: 1 <= n <= 10^4, -10^9 <= a_i <= 10^9.
"""
PUBLIC = ["5\n3 -1 4 1 5\n", "1\n7\n"]


def hidden(rng):
    def case(n, lo, hi):
        return f"{n}\n{' '.join(str(rng.randint(lo, hi)) for _ in range(n))}\n"
    tests = ["1\n-5\n", "2\n-3 -8\n", "3\n0 0 0\n", "2\n-1000000000 1000000000\n",
             "4\n-7 -2 -9 -4\n", case(10, -100, -1), case(50, 1, 1000), case(100, -10**9, 10**9),
             case(1000, -10**9, -1)]
    return tests + [case(10**4, -10**9, 10**9)]


REF_PY = r'''
n = int(input())
a = list(map(int, input().split()))
print(max(a) - min(a))
'''
REF_CPP = r'''
#include <cstdio>
int main() {
    int n; long long x, mx = -4e18, mn = 4e18;
    scanf("%d", &n);
    for (int i = 0; i < n; i++) { scanf("%lld", &x); if (x > mx) mx = x; if (x < mn) mn = x; }
    printf("%lld\n", mx - mn);
}
'''
WRONG_PY = r'''
n = int(input())
a = list(map(int, input().split()))
mx = 0
mn = a[0]
for x in a:
    mx = max(mx, x)
    mn = min(mn, x)
print(mx - mn)
'''
