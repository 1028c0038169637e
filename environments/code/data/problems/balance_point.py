TITLE = "Balance Point"
DIFFICULTY = "easy"
TAGS = ["prefix sums"]
STATEMENT = """
Find the smallest index i (1-based) such that the sum of the elements strictly left of i
equals the sum of the elements strictly right of i. An empty side sums to 0. Print -1 if there
is no such index.

Input: the first line contains n. The second line contains the array.
Output: one integer.
Constraints: 1 <= n <= 5000, -10^4 <= a_i <= 10^4.
"""
PUBLIC = ["7\n1 7 3 6 5 6 2\n", "3\n1 2 3\n"]


def hidden(rng):
    def case(n, lo, hi):
        return f"{n}\n{' '.join(str(rng.randint(lo, hi)) for _ in range(n))}\n"
    tests = ["1\n5\n", "1\n0\n", "3\n2 1 -1\n", "3\n1 -1 2\n", "2\n0 0\n", "4\n-1 -1 -1 -1\n",
             "5\n1 1 1 1 1\n", case(10, -2, 2), case(100, -1, 1), case(1000, -3, 3)]
    return tests + [case(5000, -10**4, 10**4), case(5000, -1, 1)]


REF_PY = r'''
n = int(input())
a = list(map(int, input().split()))
total, left = sum(a), 0
ans = -1
for i, x in enumerate(a):
    if left == total - left - x:
        ans = i + 1
        break
    left += x
print(ans)
'''
REF_CPP = r'''
#include <cstdio>
#include <vector>
int main() {
    int n; scanf("%d", &n);
    std::vector<long long> a(n); long long total = 0;
    for (auto& x : a) { scanf("%lld", &x); total += x; }
    long long left = 0; int ans = -1;
    for (int i = 0; i < n; i++) {
        if (left == total - left - a[i]) { ans = i + 1; break; }
        left += a[i];
    }
    printf("%d\n", ans);
}
'''
WRONG_PY = r'''
n = int(input())
a = list(map(int, input().split()))
total, left = sum(a), a[0]
ans = -1
for i in range(1, n - 1):
    if left == total - left - a[i]:
        ans = i + 1
        break
    left += a[i]
print(ans)
'''
