TITLE = "Toll and Free Roads"
DIFFICULTY = "medium-hard"
TAGS = ["graphs", "shortest paths", "0-1 bfs"]
STATEMENT = """
n cities are joined by m two-way roads. A road either has a toll (t = 1) or is free (t = 0).
What is the minimum number of toll roads on a route from city 1 to city n? Print -1 if city n
cannot be reached.

Input: the first line contains n and m; each of the next m lines contains u, v and t.
Output: one integer.
Constraints: 2 <= n <= 3000, 0 <= m <= 5000, t in {0, 1}.
"""
PUBLIC = ["4 4\n1 2 1\n2 4 1\n1 3 1\n3 4 1\n", "3 1\n1 2 1\n"]


def hidden(rng):
    def graph(n, m, p0):
        edges = [(rng.randint(1, n), rng.randint(1, n), 0 if rng.random() < p0 else 1) for _ in range(m)]
        return f"{n} {m}\n" + "".join(f"{u} {v} {t}\n" for u, v, t in edges)
    tests = ["2 1\n1 2 0\n", "2 0\n", "3 3\n1 3 1\n1 2 0\n2 3 0\n", "4 3\n1 2 0\n2 3 0\n3 4 1\n",
             "5 5\n1 5 1\n1 2 0\n2 3 0\n3 4 0\n4 5 0\n", graph(10, 20, 0.5), graph(100, 200, 0.4),
             graph(1000, 2500, 0.6), graph(2000, 3000, 0.3)]
    return tests + [graph(3000, 5000, 0.5)]


REF_PY = r'''
import sys
from collections import deque
d = list(map(int, sys.stdin.read().split()))
n, m = d[0], d[1]
adj = [[] for _ in range(n + 1)]
for i in range(m):
    u, v, t = d[2 + 3 * i: 5 + 3 * i]
    adj[u].append((v, t))
    adj[v].append((u, t))
dist = [-1] * (n + 1)
best = [10**9] * (n + 1)
best[1] = 0
q = deque([1])
while q:
    u = q.popleft()
    if dist[u] >= 0:
        continue
    dist[u] = best[u]
    for v, t in adj[u]:
        if best[u] + t < best[v]:
            best[v] = best[u] + t
            if t == 0:
                q.appendleft(v)
            else:
                q.append(v)
print(dist[n])
'''
REF_CPP = r'''
#include <cstdio>
#include <deque>
#include <vector>
int main() {
    int n, m; scanf("%d %d", &n, &m);
    std::vector<std::vector<std::pair<int, int>>> adj(n + 1);
    for (int i = 0; i < m; i++) { int u, v, t; scanf("%d %d %d", &u, &v, &t); adj[u].push_back({v, t}); adj[v].push_back({u, t}); }
    std::vector<int> best(n + 1, 1 << 30); std::vector<bool> done(n + 1, false);
    best[1] = 0; std::deque<int> q = {1};
    while (!q.empty()) {
        int u = q.front(); q.pop_front();
        if (done[u]) continue; done[u] = true;
        for (auto [v, t] : adj[u]) if (best[u] + t < best[v]) { best[v] = best[u] + t; if (t == 0) q.push_front(v); else q.push_back(v); }
    }
    printf("%d\n", done[n] ? best[n] : -1);
}
'''
WRONG_PY = r'''
import sys
from collections import deque
d = list(map(int, sys.stdin.read().split()))
n, m = d[0], d[1]
adj = [[] for _ in range(n + 1)]
for i in range(m):
    u, v, t = d[2 + 3 * i: 5 + 3 * i]
    adj[u].append(v)
    adj[v].append(u)
dist = [-1] * (n + 1)
dist[1] = 0
q = deque([1])
while q:
    u = q.popleft()
    for v in adj[u]:
        if dist[v] < 0:
            dist[v] = dist[u] + 1
            q.append(v)
print(dist[n])
'''
