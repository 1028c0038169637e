TITLE = "Rotate the Picture"
DIFFICULTY = "easy"
TAGS = ["implementation"]
STATEMENT = """
Rotate an n x m grid of characters by 90 degrees clockwise.

Input: the first line contains n and m. Each of the next n lines contains a string of m
characters from the set {'.', '#'}.
Output: the rotated grid: m lines of n characters each.
Constraints: 1 <= n, m <= 100.
"""
PUBLIC = ["2 2\n#.\n..\n", "3 3\n#..\n.#.\n..#\n"]


def hidden(rng):
    def grid(n, m):
        rows = ["".join(rng.choice(".#") for _ in range(m)) for _ in range(n)]
        return f"{n} {m}\n" + "\n".join(rows) + "\n"
    tests = ["1 1\n#\n", "1 3\n#..\n", "3 1\n#\n.\n.\n", "2 3\n##.\n...\n", grid(4, 7),
             grid(7, 4), grid(1, 50), grid(50, 1), grid(10, 10), grid(30, 70)]
    return tests + [grid(100, 100), grid(100, 99)]


REF_PY = r'''
n, m = map(int, input().split())
g = [input().strip() for _ in range(n)]
for j in range(m):
    print("".join(g[n - 1 - i][j] for i in range(n)))
'''
REF_CPP = r'''
#include <iostream>
#include <string>
#include <vector>
using namespace std;
int main() {
    int n, m; cin >> n >> m;
    vector<string> g(n);
    for (auto& r : g) cin >> r;
    for (int j = 0; j < m; j++) {
        string row;
        for (int i = n - 1; i >= 0; i--) row += g[i][j];
        cout << row << "\n";
    }
}
'''
WRONG_PY = r'''
n, m = map(int, input().split())
g = [input().strip() for _ in range(n)]
for j in range(n):
    print("".join(g[n - 1 - i][j] for i in range(n)))
'''
