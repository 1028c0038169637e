TITLE = "Two Teams"
DIFFICULTY = "medium"
TAGS = ["graphs", "bfs/dfs"]
STATEMENT = """
n students and m pairs of rivals. Can the students be split into two teams so that no two
rivals are on the same team? The rivalry graph may be disconnected.

Input: the first line contains n and m. Each of the next m lines contains two different
students u and v (1-based).
Output: YES or NO.
Constraints: 1 <= n <= 2000, 0 <= m <= 4000.
"""
PUBLIC = ["4 4\n1 2\n2 3\n3 4\n4 1\n", "3 3\n1 2\n2 3\n3 1\n"]


def hidden(rng):
    def bip(n, m, odd=False):
        side = [rng.randint(0, 1) for _ in range(n + 1)]
        edges = set()
        while len(edges) < m:
            u, v = rng.randint(1, n), rng.randint(1, n)
            if u != v and side[u] != side[v]:
                edges.add((u, v))
        edges = list(edges)
        if odd:
            u = rng.randint(2, n)
            w = next(x for x in range(1, n + 1) if x != u and side[x] == side[u])
            edges.append((u, w))
        rng.shuffle(edges)
        return f"{n} {len(edges)}\n" + "".join(f"{u} {v}\n" for u, v in edges)
    tests = ["1 0\n", "2 1\n1 2\n", "5 4\n1 2\n3 4\n4 5\n5 3\n", "6 3\n4 5\n5 6\n6 4\n",
             "6 5\n1 2\n2 3\n4 5\n5 6\n6 4\n", bip(10, 8), bip(50, 60, True), bip(300, 400),
             bip(1000, 1500, True)]
    return tests + [bip(2000, 4000, True), bip(2000, 3999)]


REF_PY = r'''
import sys
from collections import deque
d = list(map(int, sys.stdin.read().split()))
n, m = d[0], d[1]
adj = [[] for _ in range(n + 1)]
for i in range(m):
    u, v = d[2 + 2 * i], d[3 + 2 * i]
    adj[u].append(v)
    adj[v].append(u)
color = [-1] * (n + 1)
ok = True
for s in range(1, n + 1):
    if color[s] >= 0:
        continue
    color[s] = 0
    q = deque([s])
    while q and ok:
        u = q.popleft()
        for v in adj[u]:
            if color[v] < 0:
                color[v] = 1 - color[u]
                q.append(v)
            elif color[v] == color[u]:
                ok = False
print("YES" if ok else "NO")
'''
REF_CPP = r'''
#include <cstdio>
#include <queue>
#include <vector>
int main() {
    int n, m; scanf("%d %d", &n, &m);
    std::vector<std::vector<int>> adj(n + 1);
    for (int i = 0; i < m; i++) { int u, v; scanf("%d %d", &u, &v); adj[u].push_back(v); adj[v].push_back(u); }
    std::vector<int> color(n + 1, -1); bool ok = true;
    for (int s = 1; s <= n && ok; s++) {
        if (color[s] >= 0) continue;
        color[s] = 0; std::queue<int> q; q.push(s);
        while (!q.empty() && ok) {
            int u = q.front(); q.pop();
            for (int v : adj[u]) {
                if (color[v] < 0) { color[v] = 1 - color[u]; q.push(v); }
                else if (color[v] == color[u]) ok = false;
            }
        }
    }
    puts(ok ? "YES" : "NO");
}
'''
WRONG_PY = r'''
import sys
from collections import deque
d = list(map(int, sys.stdin.read().split()))
n, m = d[0], d[1]
adj = [[] for _ in range(n + 1)]
for i in range(m):
    u, v = d[2 + 2 * i], d[3 + 2 * i]
    adj[u].append(v)
    adj[v].append(u)
color = [-1] * (n + 1)
ok = True
color[1] = 0
q = deque([1])
while q and ok:
    u = q.popleft()
    for v in adj[u]:
        if color[v] < 0:
            color[v] = 1 - color[u]
            q.append(v)
        elif color[v] == color[u]:
            ok = False
print("YES" if ok else "NO")
'''
