/* SQLite store (being written). */
int spaa_storage__placeholder(void);
int spaa_storage__placeholder(void) { return 0; }
