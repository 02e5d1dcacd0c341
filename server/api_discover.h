/* GET /api/v1/diff (two profiles, base=ID&target=ID, or two selections, base.<filter>= and
 * target.<filter>=; format=json|collapsed|summary) and discovery: GET /api/v1/services,
 * /api/v1/labels, /api/v1/labels/{name}/values, /api/v1/stacks/{stack_id}. */
#ifndef SPAA_SERVER_API_DISCOVER_H
#define SPAA_SERVER_API_DISCOVER_H

#include "server/http.h"

void spaa_api_diff(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_api_services(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_api_labels(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_api_label_values(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_api_stack(const struct spaa_req *req, struct spaa_resp *resp);

#endif
