"""Writing notes of the vault (create, edit, move, delete to the trash, restore): the one
place the CLI, the MCP write tools and the HTTP API change a note."""
