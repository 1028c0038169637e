TITLE = "Lemonade Stand"
DIFFICULTY = "easy"
TAGS = ["greedy", "implementation"]
STATEMENT = """
A lemonade costs 5 coins. Customers arrive one by one and each pays with a single bill of 5,
10 or 20; you must give exact change from the bills received so far (you start with none).
Can you serve every customer? Solve t independent scenarios.

Input: the first line contains t. Each scenario has a line with n and a line with n bills.
Output: for each scenario, YES or NO.
Constraints: 1 <= t <= 100, 1 <= n <= 1000, the total number of bills is at most 2*10^4.
"""
PUBLIC = ["3\n5\n5 5 5 10 20\n2\n10 10\n4\n5 5 10 10\n", "1\n1\n20\n"]


def hidden(rng):
    def scen(n):
        bills = [rng.choice([5, 5, 5, 10, 10, 20]) for _ in range(n)]
        bills[0] = 5
        return f"{n}\n{' '.join(map(str, bills))}\n"
    fixed = ["5\n5 5 5 20 10\n", "4\n5 5 10 20\n", "6\n5 5 5 10 20 10\n", "1\n5\n", "3\n5 10 20\n",
             "5\n5 5 10 20 5\n"]
    tests = [f"1\n{f}" for f in fixed]
    tests += ["20\n" + "".join(scen(rng.randint(1, 12)) for _ in range(20)),
              "50\n" + "".join(scen(rng.randint(5, 40)) for _ in range(50)),
              "100\n" + "".join(scen(100) for _ in range(100))]
    return tests + ["20\n" + "".join(scen(1000) for _ in range(20))]


REF_PY = r'''
import sys
d = sys.stdin.read().split()
t, p = int(d[0]), 1
out = []
for _ in range(t):
    n = int(d[p]); bills = list(map(int, d[p + 1:p + 1 + n])); p += 1 + n
    fives = tens = 0
    ok = True
    for b in bills:
        if b == 5:
            fives += 1
        elif b == 10:
            tens += 1
            fives -= 1
        elif tens > 0:
            tens -= 1
            fives -= 1
        else:
            fives -= 3
        if fives < 0:
            ok = False
            break
    out.append("YES" if ok else "NO")
print("\n".join(out))
'''
REF_CPP = r'''
#include <cstdio>
int main() {
    int t; scanf("%d", &t);
    while (t--) {
        int n; scanf("%d", &n);
        int fives = 0, tens = 0; bool ok = true;
        for (int i = 0; i < n; i++) {
            int b; scanf("%d", &b);
            if (!ok) continue;
            if (b == 5) fives++;
            else if (b == 10) { tens++; fives--; }
            else if (tens > 0) { tens--; fives--; }
            else fives -= 3;
            if (fives < 0) ok = false;
        }
        puts(ok ? "YES" : "NO");
    }
}
'''
WRONG_PY = r'''
import sys
d = sys.stdin.read().split()
t, p = int(d[0]), 1
out = []
for _ in range(t):
    n = int(d[p]); bills = list(map(int, d[p + 1:p + 1 + n])); p += 1 + n
    fives = tens = 0
    ok = True
    for b in bills:
        if b == 5:
            fives += 1
        elif b == 10:
            tens += 1
            fives -= 1
        elif fives >= 3:
            fives -= 3
        else:
            tens -= 1
            fives -= 1
        if fives < 0 or tens < 0:
            ok = False
            break
    out.append("YES" if ok else "NO")
print("\n".join(out))
'''
