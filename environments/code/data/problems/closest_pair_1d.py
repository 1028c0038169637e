TITLE = "Closest Values"
DIFFICULTY = "easy"
TAGS = ["sorting"]
STATEMENT = """
Given n integers, find the minimum of |a_i - a_j| over all pairs i != j.

Input: the first line contains n. The second line contains n integers.
Output: one integer.
Constraints: 2 <= n <= 5000, -10^9 <= a_i <= 10^9.
"""
PUBLIC = ["4\n1 5 9 10\n", "3\n-4 0 7\n"]


def hidden(rng):
    def case(n, lo, hi):
        return f"{n}\n{' '.join(str(rng.randint(lo, hi)) for _ in range(n))}\n"
    tests = ["2\n5 5\n", "2\n-1000000000 1000000000\n", "5\n10 1 20 2 30\n", "4\n8 3 7 2\n",
             "3\n100 -100 1\n", case(10, -50, 50), case(100, -10**6, 10**6), case(1000, 0, 10**9),
             case(2000, -10**9, 10**9)]
    return tests + [case(5000, -10**9, 10**9)]


REF_PY = r'''
n = int(input())
a = sorted(map(int, input().split()))
print(min(a[i + 1] - a[i] for i in range(n - 1)))
'''
REF_CPP = r'''
#include <algorithm>
#include <cstdio>
#include <vector>
int main() {
    int n; scanf("%d", &n);
    std::vector<long long> a(n);
    for (auto& x : a) scanf("%lld", &x);
    std::sort(a.begin(), a.end());
    long long best = 4e18;
    for (int i = 0; i + 1 < n; i++) best = std::min(best, a[i + 1] - a[i]);
    printf("%lld\n", best);
}
'''
WRONG_PY = r'''
n = int(input())
a = list(map(int, input().split()))
print(min(abs(a[i + 1] - a[i]) for i in range(n - 1)))
'''
