TITLE = "Houses in a Circle"
DIFFICULTY = "medium"
TAGS = ["dp"]
STATEMENT = """
n houses stand in a circle (house n is next to house 1); house i holds a_i coins. Collect
from a set of houses with no two adjacent. Print the largest total.

Input: the first line contains n; the second line contains a_1 .. a_n.
Output: one integer.
Constraints: 1 <= n <= 5000, 0 <= a_i <= 1000.
"""
PUBLIC = ["4\n1 2 3 1\n", "1\n5\n"]


def hidden(rng):
    def case(n, hi):
        return f"{n}\n{' '.join(str(rng.randint(0, hi)) for _ in range(n))}\n"
    tests = ["3\n2 3 2\n", "2\n4 9\n", "3\n5 1 5\n", "5\n9 1 1 1 9\n", "4\n0 0 0 0\n", case(7, 10),
             case(50, 100), case(500, 1000), case(1001, 1000)]
    return tests + [case(5000, 1000)]


REF_PY = r'''
n = int(input())
a = list(map(int, input().split()))
def line(xs):
    take = skip = 0
    for x in xs:
        take, skip = skip + x, max(take, skip)
    return max(take, skip)
print(a[0] if n == 1 else max(line(a[1:]), line(a[:-1])))
'''
REF_CPP = r'''
#include <algorithm>
#include <cstdio>
#include <vector>
long long line(const std::vector<long long>& a, int lo, int hi) {
    long long take = 0, skip = 0;
    for (int i = lo; i < hi; i++) { long long t = skip + a[i]; skip = std::max(take, skip); take = t; }
    return std::max(take, skip);
}
int main() {
    int n; scanf("%d", &n); std::vector<long long> a(n);
    for (auto& x : a) scanf("%lld", &x);
    printf("%lld\n", n == 1 ? a[0] : std::max(line(a, 1, n), line(a, 0, n - 1)));
}
'''
WRONG_PY = r'''
n = int(input())
a = list(map(int, input().split()))
take = skip = 0
for x in a:
    take, skip = skip + x, max(take, skip)
print(max(take, skip))
'''
