TITLE = "Sort by Frequency"
DIFFICULTY = "medium"
TAGS = ["sorting"]
STATEMENT = """
Reorder n integers so that values occurring more often come first. Values with the same
number of occurrences are ordered by increasing value. Equal values stay together.

Input: the first line contains n. The second line contains n integers.
Output: the n reordered integers on one line, separated by spaces.
Constraints: 1 <= n <= 5000, -10^6 <= a_i <= 10^6.
"""
PUBLIC = ["6\n4 6 4 2 6 6\n", "3\n5 5 5\n"]


def hidden(rng):
    def case(n, lo, hi):
        return f"{n}\n{' '.join(str(rng.randint(lo, hi)) for _ in range(n))}\n"
    tests = ["1\n-3\n", "4\n9 1 9 1\n", "5\n3 1 2 1 3\n", "4\n-1 -2 -2 -1\n", "5\n5 4 3 2 1\n",
             case(10, 1, 4), case(40, -5, 5), case(200, 0, 30), case(1000, -100, 100)]
    return tests + [case(5000, -300, 300)]


REF_PY = r'''
from collections import Counter
n = int(input())
a = list(map(int, input().split()))
c = Counter(a)
print(" ".join(map(str, sorted(a, key=lambda x: (-c[x], x)))))
'''
REF_CPP = r'''
#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>
int main() {
    int n; scanf("%d", &n);
    std::vector<int> a(n);
    std::map<int, int> c;
    for (auto& x : a) { scanf("%d", &x); c[x]++; }
    std::sort(a.begin(), a.end(), [&](int x, int y) {
        if (c[x] != c[y]) return c[x] > c[y];
        return x < y;
    });
    for (int i = 0; i < n; i++) printf("%d%c", a[i], i + 1 == n ? '\n' : ' ');
}
'''
WRONG_PY = r'''
from collections import Counter
n = int(input())
a = list(map(int, input().split()))
c = Counter(a)
order = [v for v, _ in c.most_common()]
out = []
for v in order:
    out += [v] * c[v]
print(" ".join(map(str, out)))
'''
