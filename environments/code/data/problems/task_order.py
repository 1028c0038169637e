TITLE = "Task Order"
DIFFICULTY = "medium"
TAGS = ["graphs", "topological sort"]
STATEMENT = """
There are n tasks and m constraints "a must be done before b". Print the lexicographically
smallest order of all tasks that respects every constraint, or -1 if none exists.

Input: the first line contains n and m; each of the next m lines contains a and b.
Output: n task numbers separated by spaces, or -1.
Constraints: 1 <= n <= 3000, 0 <= m <= 5000, a != b.
"""
PUBLIC = ["4 3\n1 2\n1 3\n3 4\n", "2 2\n1 2\n2 1\n"]


def hidden(rng):
    def dag(n, m, cycle=False):
        perm = list(range(1, n + 1))
        rng.shuffle(perm)
        edges = []
        for _ in range(m):
            i, j = sorted(rng.sample(range(n), 2))
            edges.append((perm[i], perm[j]))
        if cycle:
            i, j = sorted(rng.sample(range(n), 2))
            edges.append((perm[j], perm[i]))
        return f"{n} {len(edges)}\n" + "".join(f"{a} {b}\n" for a, b in edges)
    tests = ["1 0\n", "3 0\n", "3 1\n3 1\n", "3 2\n2 1\n3 1\n", "4 2\n4 1\n2 3\n", "3 3\n1 2\n2 3\n3 1\n",
             dag(10, 12), dag(50, 80, True), dag(300, 500), dag(1000, 2000)]
    return tests + [dag(3000, 5000), dag(3000, 4999, True)]


REF_PY = r'''
import sys, heapq
d = list(map(int, sys.stdin.read().split()))
n, m = d[0], d[1]
adj = [[] for _ in range(n + 1)]
indeg = [0] * (n + 1)
for i in range(m):
    a, b = d[2 + 2 * i], d[3 + 2 * i]
    adj[a].append(b)
    indeg[b] += 1
heap = [v for v in range(1, n + 1) if indeg[v] == 0]
heapq.heapify(heap)
order = []
while heap:
    u = heapq.heappop(heap)
    order.append(u)
    for v in adj[u]:
        indeg[v] -= 1
        if indeg[v] == 0:
            heapq.heappush(heap, v)
print(" ".join(map(str, order)) if len(order) == n else -1)
'''
REF_CPP = r'''
#include <cstdio>
#include <functional>
#include <queue>
#include <vector>
int main() {
    int n, m; scanf("%d %d", &n, &m);
    std::vector<std::vector<int>> adj(n + 1); std::vector<int> indeg(n + 1, 0);
    for (int i = 0; i < m; i++) { int a, b; scanf("%d %d", &a, &b); adj[a].push_back(b); indeg[b]++; }
    std::priority_queue<int, std::vector<int>, std::greater<int>> pq;
    for (int v = 1; v <= n; v++) if (!indeg[v]) pq.push(v);
    std::vector<int> order;
    while (!pq.empty()) {
        int u = pq.top(); pq.pop(); order.push_back(u);
        for (int v : adj[u]) if (--indeg[v] == 0) pq.push(v);
    }
    if ((int)order.size() != n) { puts("-1"); return 0; }
    for (int i = 0; i < n; i++) printf("%d%c", order[i], i + 1 == n ? '\n' : ' ');
}
'''
WRONG_PY = r'''
import sys
from collections import deque
d = list(map(int, sys.stdin.read().split()))
n, m = d[0], d[1]
adj = [[] for _ in range(n + 1)]
indeg = [0] * (n + 1)
for i in range(m):
    a, b = d[2 + 2 * i], d[3 + 2 * i]
    adj[a].append(b)
    indeg[b] += 1
q = deque(v for v in range(1, n + 1) if indeg[v] == 0)
order = []
while q:
    u = q.popleft()
    order.append(u)
    for v in adj[u]:
        indeg[v] -= 1
        if indeg[v] == 0:
            q.append(v)
print(" ".join(map(str, order)) if len(order) == n else -1)
'''
