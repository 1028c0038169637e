TITLE = "K-th Largest Distinct Value"
DIFFICULTY = "easy"
TAGS = ["sorting"]
STATEMENT = """
Given n integers and k, print the k-th largest among the distinct values, or -1 if there are
fewer than k distinct values.

Input: the first line contains n and k. The second line contains n integers.
Output: one integer.
Constraints: 1 <= k <= n <= 5000, -10^6 <= a_i <= 10^6.
"""
PUBLIC = ["5 2\n4 9 1 7 3\n", "3 3\n10 20 30\n"]


def hidden(rng):
    def case(n, k, lo, hi):
        return f"{n} {k}\n{' '.join(str(rng.randint(lo, hi)) for _ in range(n))}\n"
    tests = ["1 1\n5\n", "3 2\n7 7 7\n", "4 2\n5 5 3 1\n", "6 3\n1 2 2 3 3 3\n", "5 5\n-1 -2 -3 -4 -5\n",
             case(20, 5, 1, 6), case(50, 10, -20, 20), case(100, 100, 1, 1000), case(1000, 300, -500, 500)]
    return tests + [case(4000, 1500, -2000, 2000)]


REF_PY = r'''
n, k = map(int, input().split())
vals = sorted(set(map(int, input().split())), reverse=True)
print(vals[k - 1] if k <= len(vals) else -1)
'''
REF_CPP = r'''
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>
int main() {
    int n, k; scanf("%d %d", &n, &k);
    std::vector<int> a(n);
    for (auto& x : a) scanf("%d", &x);
    std::sort(a.begin(), a.end(), std::greater<int>());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    printf("%d\n", k <= (int)a.size() ? a[k - 1] : -1);
}
'''
WRONG_PY = r'''
n, k = map(int, input().split())
vals = sorted(map(int, input().split()), reverse=True)
print(vals[k - 1] if k <= len(vals) else -1)
'''
