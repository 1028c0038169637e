TITLE = "Count the Islands"
DIFFICULTY = "easy"
TAGS = ["graphs", "bfs/dfs"]
STATEMENT = """
A map is an n x m grid of '#' (land) and '.' (water). Two land cells belong to the same island
if they share a side (diagonal contact does not connect). Count the islands.

Input: the first line contains n and m; then n lines of m characters.
Output: one integer.
Constraints: 1 <= n, m <= 150.
"""
PUBLIC = ["3 4\n##..\n#..#\n...#\n", "1 1\n.\n"]


def hidden(rng):
    def grid(n, m, p):
        return f"{n} {m}\n" + "\n".join("".join("#" if rng.random() < p else "." for _ in range(m)) for _ in range(n)) + "\n"
    tests = ["1 1\n#\n", "2 2\n#.\n.#\n", "3 3\n#.#\n.#.\n#.#\n", "2 3\n###\n###\n", "3 3\n.#.\n###\n.#.\n",
             grid(5, 5, 0.5), grid(20, 30, 0.4), grid(50, 50, 0.6), grid(1, 150, 0.5)]
    return tests + [grid(150, 150, 0.45)]


REF_PY = r'''
import sys
from collections import deque
d = sys.stdin.read().split()
n, m = int(d[0]), int(d[1])
g = d[2:2 + n]
seen = [[False] * m for _ in range(n)]
count = 0
for i in range(n):
    for j in range(m):
        if g[i][j] == "#" and not seen[i][j]:
            count += 1
            seen[i][j] = True
            q = deque([(i, j)])
            while q:
                r, c = q.popleft()
                for rr, cc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                    if 0 <= rr < n and 0 <= cc < m and g[rr][cc] == "#" and not seen[rr][cc]:
                        seen[rr][cc] = True
                        q.append((rr, cc))
print(count)
'''
REF_CPP = r'''
#include <iostream>
#include <queue>
#include <string>
#include <vector>
using namespace std;
int main() {
    int n, m; cin >> n >> m;
    vector<string> g(n); for (auto& r : g) cin >> r;
    vector<vector<bool>> seen(n, vector<bool>(m, false));
    int count = 0, dr[] = {1, -1, 0, 0}, dc[] = {0, 0, 1, -1};
    for (int i = 0; i < n; i++) for (int j = 0; j < m; j++) {
        if (g[i][j] != '#' || seen[i][j]) continue;
        count++; seen[i][j] = true; queue<pair<int, int>> q; q.push({i, j});
        while (!q.empty()) {
            auto [r, c] = q.front(); q.pop();
            for (int k = 0; k < 4; k++) {
                int rr = r + dr[k], cc = c + dc[k];
                if (rr >= 0 && rr < n && cc >= 0 && cc < m && g[rr][cc] == '#' && !seen[rr][cc]) {
                    seen[rr][cc] = true; q.push({rr, cc});
                }
            }
        }
    }
    cout << count << "\n";
}
'''
WRONG_PY = r'''
import sys
from collections import deque
d = sys.stdin.read().split()
n, m = int(d[0]), int(d[1])
g = d[2:2 + n]
seen = [[False] * m for _ in range(n)]
count = 0
for i in range(n):
    for j in range(m):
        if g[i][j] == "#" and not seen[i][j]:
            count += 1
            seen[i][j] = True
            q = deque([(i, j)])
            while q:
                r, c = q.popleft()
                for dr in (-1, 0, 1):
                    for dc in (-1, 0, 1):
                        rr, cc = r + dr, c + dc
                        if 0 <= rr < n and 0 <= cc < m and g[rr][cc] == "#" and not seen[rr][cc]:
                            seen[rr][cc] = True
                            q.append((rr, cc))
print(count)
'''
