/* numa_probe: the placement check of numa.h on pages this process touched
 * without any binding. Prints "<sampled> <on_node>" for the node given. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numa.h"

int main(int argc, char **argv)
{
	const size_t bytes = 4u << 20;
	char *buffer = malloc(bytes);
	uint64_t sampled, on_node;

	if (argc != 2 || !buffer)
		return 2;
	memset(buffer, 1, bytes);
	if (numa_pages_on_node(buffer, bytes, atoi(argv[1]), &sampled, &on_node) != 0) {
		perror("move_pages");
		return 1;
	}
	printf("%llu %llu\n", (unsigned long long)sampled, (unsigned long long)on_node);
	free(buffer);
	return 0;
}
