"""Playing games: one turn loop with two sides, and the sessions on it (pit, chouette, duels, terminal, external)."""
