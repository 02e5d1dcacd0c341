/* Configuration (being written). */
int spaa_config__placeholder(void);
int spaa_config__placeholder(void) { return 0; }
