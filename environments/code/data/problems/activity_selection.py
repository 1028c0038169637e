TITLE = "Busy Speaker"
DIFFICULTY = "medium"
TAGS = ["greedy", "sorting"]
STATEMENT = """
A speaker is invited to n talks; talk i runs over the closed interval [s_i, e_i]. The speaker
can attend talks that do not share any moment of time (a talk ending at t and one starting at
t overlap). What is the largest number of talks the speaker can give?

Input: the first line contains n. Each of the next n lines contains s_i and e_i.
Output: one integer.
Constraints: 1 <= n <= 5000, 0 <= s_i <= e_i <= 10^6.
"""
PUBLIC = ["3\n1 2\n3 4\n5 6\n", "3\n1 10\n2 3\n4 5\n"]


def hidden(rng):
    def case(n, span, maxlen):
        rows = []
        for _ in range(n):
            s = rng.randint(0, span)
            rows.append(f"{s} {min(10**6, s + rng.randint(0, maxlen))}")
        return f"{n}\n" + "\n".join(rows) + "\n"
    tests = ["1\n5 5\n", "2\n1 3\n3 5\n", "3\n1 2\n2 3\n3 4\n", "4\n0 100\n1 2\n50 60\n3 4\n",
             "3\n1 5\n1 5\n1 5\n", "3\n1 100\n2 3\n101 102\n", case(10, 30, 8), case(100, 500, 40),
             case(1000, 10**5, 500)]
    return tests + [case(5000, 10**6, 2000)]


REF_PY = r'''
import sys
d = list(map(int, sys.stdin.read().split()))
n = d[0]
talks = sorted(((d[2 + 2 * i], d[1 + 2 * i]) for i in range(n)))
count, last = 0, -1
for e, s in talks:
    if s > last:
        count += 1
        last = e
print(count)
'''
REF_CPP = r'''
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>
int main() {
    int n; scanf("%d", &n);
    std::vector<std::pair<int, int>> t(n);
    for (auto& p : t) scanf("%d %d", &p.second, &p.first);
    std::sort(t.begin(), t.end());
    int count = 0, last = -1;
    for (auto& p : t) if (p.second > last) { count++; last = p.first; }
    printf("%d\n", count);
}
'''
WRONG_PY = r'''
import sys, bisect
d = list(map(int, sys.stdin.read().split()))
n = d[0]
talks = sorted(((d[2 + 2 * i] - d[1 + 2 * i], d[1 + 2 * i], d[2 + 2 * i]) for i in range(n)))
starts, ends = [], []
for _, s, e in talks:
    k = bisect.bisect_left(starts, s)
    if (k == 0 or ends[k - 1] < s) and (k == len(starts) or starts[k] > e):
        starts.insert(k, s)
        ends.insert(k, e)
print(len(starts))
'''
