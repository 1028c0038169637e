TITLE = "Escape the Maze"
DIFFICULTY = "medium"
TAGS = ["graphs", "bfs/dfs", "shortest paths"]
STATEMENT = """
A maze is an n x m grid with walls '#', free cells '.', one start 'S' and one exit 'E'. Each
move goes to a side-adjacent free cell (S and E are free). Print the minimum number of moves
from S to E, or -1 if E cannot be reached.

Input: the first line contains n and m; then n lines of m characters.
Output: one integer.
Constraints: 1 <= n, m <= 150, n*m >= 2.
"""
PUBLIC = ["3 3\nS..\n.#.\n..E\n", "1 2\nSE\n"]


def hidden(rng):
    def grid(n, m, p):
        cells = [["#" if rng.random() < p else "." for _ in range(m)] for _ in range(n)]
        (a, b), (c, d) = rng.sample([(i, j) for i in range(n) for j in range(m)], 2)
        cells[a][b], cells[c][d] = "S", "E"
        return f"{n} {m}\n" + "\n".join("".join(r) for r in cells) + "\n"
    tests = ["1 3\nS#E\n", "2 2\nS#\n#E\n", "3 3\nS#.\n.#.\n..E\n", "2 5\nS....\n####E\n", "5 1\nS\n.\n.\n.\nE\n",
             grid(5, 5, 0.3), grid(20, 20, 0.35), grid(60, 40, 0.3), grid(100, 100, 0.45)]
    return tests + [grid(150, 150, 0.3)]


REF_PY = r'''
import sys
from collections import deque
d = sys.stdin.read().split()
n, m = int(d[0]), int(d[1])
g = d[2:2 + n]
start = next((i, j) for i in range(n) for j in range(m) if g[i][j] == "S")
dist = [[-1] * m for _ in range(n)]
dist[start[0]][start[1]] = 0
q = deque([start])
ans = -1
while q:
    r, c = q.popleft()
    if g[r][c] == "E":
        ans = dist[r][c]
        break
    for rr, cc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
        if 0 <= rr < n and 0 <= cc < m and g[rr][cc] != "#" and dist[rr][cc] < 0:
            dist[rr][cc] = dist[r][c] + 1
            q.append((rr, cc))
print(ans)
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
    vector<vector<int>> dist(n, vector<int>(m, -1));
    queue<pair<int, int>> q;
    for (int i = 0; i < n; i++) for (int j = 0; j < m; j++) if (g[i][j] == 'S') { dist[i][j] = 0; q.push({i, j}); }
    int dr[] = {1, -1, 0, 0}, dc[] = {0, 0, 1, -1}, ans = -1;
    while (!q.empty()) {
        auto [r, c] = q.front(); q.pop();
        if (g[r][c] == 'E') { ans = dist[r][c]; break; }
        for (int k = 0; k < 4; k++) {
            int rr = r + dr[k], cc = c + dc[k];
            if (rr >= 0 && rr < n && cc >= 0 && cc < m && g[rr][cc] != '#' && dist[rr][cc] < 0) {
                dist[rr][cc] = dist[r][c] + 1; q.push({rr, cc});
            }
        }
    }
    cout << ans << "\n";
}
'''
WRONG_PY = r'''
import sys
from collections import deque
d = sys.stdin.read().split()
n, m = int(d[0]), int(d[1])
g = d[2:2 + n]
start = next((i, j) for i in range(n) for j in range(m) if g[i][j] == "S")
dist = [[-1] * m for _ in range(n)]
dist[start[0]][start[1]] = 0
q = deque([start])
ans = 0
while q:
    r, c = q.popleft()
    if g[r][c] == "E":
        ans = dist[r][c]
        break
    for rr, cc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
        if 0 <= rr < n and 0 <= cc < m and g[rr][cc] != "#" and dist[rr][cc] < 0:
            dist[rr][cc] = dist[r][c] + 1
            q.append((rr, cc))
print(ans)
'''
