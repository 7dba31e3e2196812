package e2e

import (
	"time"

	. "github.com/onsi/gomega"
)

// matrix is the authorization matrix's table: one row per id-taking operation. Statuses:
// identity-svc answers 404 for a record of a tenant the caller may not read and 403 to a
// member of the tenant who may read but not manage it; content-svc answers 403 to anyone but a
// platform administrator on catalog writes and 404 for unpublished records to whoever may not
// see them; agentteam-svc answers an empty 403 to a caller without the capability on an
// existing record, whoever they are (docs/adr/0048-authorization-matrix.md).
var matrix = []row{
	// --- identity-svc: the caller's own records -----------------------------------------------
	{svc: identity, op: "revokeSession", on: sessionOfA, admits: users, other: is(404), member: is(404), ok: []int{204}},
	{svc: identity, op: "verifyMfa", on: mfaFactorOfA, admits: users, other: is(404), member: is(404),
		body: func(ids map[string]string, _ string) any {
			return map[string]any{"factor_id": ids["factor_id"], "code": totp(ids["totp_secret"], time.Now())}
		}},
	{svc: identity, op: "getPlan", on: planOfA, admits: users, other: is(404), member: may},
	{svc: identity, op: "purchasePlan", on: planOfA, admits: users, other: is(404), member: may,
		body: func(ids map[string]string, _ string) any {
			return map[string]any{"plan_id": ids["plan_id"], "gateway": "Balance"}
		}},
	{svc: identity, op: "getPayment", on: paymentOfA, admits: users, other: is(404), member: is(404)},
	{svc: identity, op: "refundPayment", on: paymentOfA, admits: services, other: is(403), member: is(403), ok: []int{409},
		body: func(ids map[string]string, text string) any {
			return map[string]any{"payment_id": ids["payment_id"], "reason": text}
		}},
	{svc: identity, op: "createDiscount", on: discountOfA, admits: users, other: is(400), member: is(403), ok: []int{201},
		body: func(ids map[string]string, text string) any {
			return map[string]any{"name": text, "code": "C" + marker(), "kind": "Percentage", "value": 5,
				"owner_user_id": ids["owner_user_id"], "applies_to_plan_ids": list(ids["applies_to_plan_ids"])}
		}},
	{svc: identity, op: "validateDiscount", on: discountOfA, admits: users, other: is(404), member: may,
		also: []attempt{strangerWith("plan_id")(answers(200, `"valid":false`))},
		body: func(ids map[string]string, _ string) any {
			return map[string]any{"code": ids["code"], "plan_id": ids["plan_id"]}
		}},
	{svc: identity, op: "claimQuest", on: questOfA, admits: users, other: is(404), member: may, ok: []int{409}},
	{svc: identity, op: "useEarnedGift", on: earnedGiftOfA, admits: users, other: is(404), member: is(404)},
	// The avatar library is the platform's: every user may pick from it.
	{svc: identity, op: "setMyAvatar", on: avatarLibrary, admits: users, other: may, member: may,
		body: func(ids map[string]string, _ string) any { return map[string]any{"avatar_id": ids["avatar_id"]} }},

	// --- identity-svc: users and tenants ------------------------------------------------------
	{svc: identity, op: "getUser", on: userOfA, admits: users, other: is(404), member: is(403)},
	{svc: identity, op: "listUsers", on: userOfA, admits: users, other: is(403), member: is(403)},
	{svc: identity, op: "banUser", on: freshUserOfA, admits: users, other: is(404), member: is(403), ok: []int{204},
		body: func(_ map[string]string, text string) any { return map[string]any{"reason": text} },
		kept: keptField("is_banned", false)},
	{svc: identity, op: "getTenantBySlug", on: tenantOfA, admits: usersOrService, other: is(404), member: may},
	{svc: identity, op: "getTenant", on: tenantOfA, admits: usersOrService, other: is(404), member: may},
	{svc: identity, op: "updateTenant", on: tenantOfA, admits: users, other: is(404), member: is(403),
		body: func(_ map[string]string, text string) any { return map[string]any{"contact_name": text} }},
	{svc: identity, op: "getTenantBranding", on: brandingOfA, admits: usersOrService, other: is(404), member: may},
	{svc: identity, op: "putTenantBranding", on: brandingOfA, admits: users, other: is(404), member: is(403),
		body: func(_ map[string]string, text string) any { return map[string]any{"display_name": text} }},
	{svc: identity, op: "verifyTenantDomain", on: tenantOfA, admits: users, other: is(404), member: is(403),
		body: func(_ map[string]string, text string) any { return map[string]any{"domain": text + ".example.test"} }},
	{svc: identity, op: "getTenantUsage", on: tenantOfA, admits: usersOrService, other: is(404), member: is(403)},

	// --- identity-svc: API keys and webhooks --------------------------------------------------
	{svc: identity, op: "listApiKeys", on: apiKeyOfA, admits: users, other: is(404), member: is(403)},
	{svc: identity, op: "createApiKey", on: apiKeyOfA, admits: users, other: is(404), member: is(403), ok: []int{201},
		body: func(_ map[string]string, text string) any {
			return map[string]any{"name": text, "scopes": list("renders:read")}
		}},
	{svc: identity, op: "revokeApiKey", on: apiKeyOfA, admits: users, other: is(404), member: is(403), ok: []int{204},
		also: []attempt{strangerWith("tenant_id")(is(404))},
		kept: keptHolding(`"is_active":true`)},
	{svc: identity, op: "listWebhooks", on: webhookOfA, admits: users, other: is(404), member: is(403)},
	{svc: identity, op: "createWebhook", on: webhookOfA, admits: users, other: is(404), member: is(403), ok: []int{201},
		body: func(_ map[string]string, text string) any {
			return map[string]any{"name": text, "url": "http://127.0.0.1:9/" + text, "events": list("user.registered")}
		}},
	{svc: identity, op: "deleteWebhook", on: webhookOfA, admits: users, other: is(404), member: is(403), ok: []int{204},
		also: []attempt{strangerWith("tenant_id")(is(404))}},
	{svc: identity, op: "listWebhookDeliveries", on: webhookOfA, admits: users, other: is(404), member: is(403),
		also: []attempt{strangerWith("tenant_id")(is(404))}},

	// --- content-svc: the catalog -------------------------------------------------------------
	{svc: content, op: "listTemplates", on: containerOfA, admits: usersOrService, other: leftOut, member: leftOut},
	{svc: content, op: "getTemplate", on: draftProjectInPublishedContainer, admits: usersOrService, other: leftOut, member: leftOut},
	{svc: content, op: "listTemplateProjects", on: draftProjectInPublishedContainer, admits: usersOrService, other: leftOut, member: leftOut},
	{svc: content, op: "listRelatedTemplates", on: relatedDraftOfA, admits: usersOrService, other: leftOut, member: leftOut},
	{svc: content, op: "createContainer", on: publishedContainerOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{201},
		body: func(ids map[string]string, text string) any {
			return map[string]any{"slug": "authz-" + marker(), "name": text, "primary_mode": "video",
				"category_ids": list(ids["category_ids"]), "tag_ids": list(ids["tag_ids"])}
		}},
	{svc: content, op: "updateContainer", on: publishedContainerOfA, admits: platformAdmins, other: is(403), member: is(403),
		body: func(_ map[string]string, text string) any { return map[string]any{"name": text} }},
	{svc: content, op: "deleteContainer", on: publishedContainerOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{204}},
	{svc: content, op: "publishContainer", on: containerOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{204},
		kept: keptStatus(404)},
	{svc: content, op: "unpublishContainer", on: publishedContainerOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{204},
		body: func(_ map[string]string, text string) any { return map[string]any{"reason": text} }},

	// --- content-svc: projects and their editor graph -----------------------------------------
	{svc: content, op: "createProject", on: projectPartsOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{201},
		body: func(ids map[string]string, text string) any {
			return map[string]any{"container_id": ids["container_id"], "project_server_id": ids["project_server_id"], "name": text,
				"original_width": 1080, "original_height": 1080, "project_duration_sec": 5, "choose_mode": "auto"}
		}},
	{svc: content, op: "getProject", on: projectOfA, admits: usersOrService, other: is(404), member: is(404)},
	{svc: content, op: "updateProject", on: projectOfA, admits: platformAdmins, other: is(403), member: is(403),
		body: func(_ map[string]string, text string) any { return map[string]any{"description": text} }},
	{svc: content, op: "deleteProject", on: projectOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{204}},
	{svc: content, op: "getProjectFull", on: projectOfA, admits: usersOrService, other: is(404), member: is(404)},
	{svc: content, op: "listScenes", on: sceneOfA, admits: usersOrService, other: is(404), member: is(404)},
	{svc: content, op: "createScene", on: projectOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{201},
		body: func(_ map[string]string, text string) any { return map[string]any{"key": text, "title": text} }},
	{svc: content, op: "getScene", on: sceneOfA, admits: usersOrService, other: is(404), member: is(404)},
	{svc: content, op: "updateScene", on: sceneOfA, admits: platformAdmins, other: is(403), member: is(403),
		body: func(_ map[string]string, text string) any { return map[string]any{"title": text} }},
	{svc: content, op: "deleteScene", on: sceneOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{204}},
	{svc: content, op: "reorderScenes", on: sceneOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{204},
		body: func(ids map[string]string, _ string) any { return map[string]any{"ordered_ids": list(ids["scene_id"])} }},
	{svc: content, op: "listSceneElements", on: contentElementOfA, admits: usersOrService, other: is(404), member: is(404)},
	{svc: content, op: "createSceneContent", on: sharedPartsOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{201},
		body: func(ids map[string]string, text string) any {
			return map[string]any{"key": text, "label": text, "shared_layer_id": ids["shared_layer_id"]}
		}},
	{svc: content, op: "updateSceneContent", on: contentElementOfA, admits: platformAdmins, other: is(403), member: is(403),
		body: func(_ map[string]string, text string) any {
			return map[string]any{"key": "k" + marker(), "label": text}
		}},
	{svc: content, op: "deleteSceneContent", on: contentElementOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{204}},
	{svc: content, op: "createSceneColor", on: sharedPartsOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{201},
		body: func(ids map[string]string, text string) any {
			return map[string]any{"key": text, "label": text, "default_color": "#000000", "shared_color_id": ids["shared_color_id"]}
		}},
	{svc: content, op: "updateSceneColor", on: colorElementOfA, admits: platformAdmins, other: is(403), member: is(403),
		body: func(_ map[string]string, text string) any {
			return map[string]any{"key": "k" + marker(), "label": text, "default_color": "#000000"}
		}},
	{svc: content, op: "deleteSceneColor", on: colorElementOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{204}},
	{svc: content, op: "listSharedLayers", on: sharedLayerOfA, admits: usersOrService, other: is(404), member: is(404)},
	{svc: content, op: "createSharedLayer", on: projectOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{201},
		body: func(_ map[string]string, text string) any { return map[string]any{"key": text, "label": text} }},
	{svc: content, op: "listSharedColors", on: sharedColorOfA, admits: usersOrService, other: is(404), member: is(404)},
	{svc: content, op: "createSharedColor", on: projectOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{201},
		body: func(_ map[string]string, text string) any {
			return map[string]any{"key": text, "label": text, "color": "#000000"}
		}},
	{svc: content, op: "listPresetStories", on: presetStoryOfA, admits: usersOrService, other: is(404), member: is(404)},
	{svc: content, op: "createPresetStory", on: sceneOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{201},
		body: func(ids map[string]string, text string) any {
			return map[string]any{"name": text, "scenes": []map[string]any{{"scene_id": ids["scene_id"], "position": 0}}}
		}},
	{svc: content, op: "getPresetStory", on: presetStoryOfA, admits: usersOrService, other: is(404), member: is(404)},

	// --- content-svc: source files and previews -----------------------------------------------
	{svc: content, op: "putProjectAep", on: projectOfA, admits: platformAdmins, other: is(403), member: is(403),
		body: func(_ map[string]string, _ string) any { return form{files: map[string][]byte{"file": aepBytes()}} }},
	{svc: content, op: "startAepUpload", on: projectOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{201},
		body: func(_ map[string]string, text string) any {
			return map[string]any{"filename": text + ".aep", "total_size_bytes": 300_000_000}
		}},
	{svc: content, op: "completeAepUpload", on: aepUploadOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{400},
		body: func(ids map[string]string, _ string) any {
			return map[string]any{"upload_id": ids["upload_id"], "parts": []map[string]any{{"part_number": 1, "etag": "x"}}}
		}},
	// Administrators and services see unpublished projects; everyone else is answered as for an unknown id.
	{svc: content, op: "generateSvgPreview", on: colorElementOfA, admits: usersOrService, other: is(404), member: is(404), ok: []int{202},
		body: func(ids map[string]string, _ string) any {
			return form{fields: map[string]string{"target_type": "scene", "target_id": ids["scene_id"]}, files: map[string][]byte{"image": tinyPNG()}}
		}},
	{svc: content, op: "getSvgPreview", on: previewOfA, admits: usersOrService, other: is(404), member: is(404)},
	{svc: content, op: "getSceneSvgPreview", on: previewOfA, admits: usersOrService, other: is(404), member: is(404)},

	// --- content-svc: favorites (each caller's own) -------------------------------------------
	{svc: content, op: "listFavorites", on: favoritesOfA, admits: usersOrService, other: is(404), member: is(404),
		also: []attempt{asService(is(404))}},
	{svc: content, op: "addFavorite", on: favoritesOfA, admits: usersOrService, other: is(404), member: is(404),
		also: []attempt{asService(is(404))}, ok: []int{201},
		body: func(ids map[string]string, text string) any {
			return map[string]any{"container_id": ids["container_id"], "folder_id": ids["folder_id"], "note": text}
		}},
	{svc: content, op: "removeFavorite", on: favoritesOfA, admits: usersOrService, other: is(404), member: is(404),
		also: []attempt{asService(is(404))}, ok: []int{204}},

	// --- content-svc: media, site content, settings, render servers ---------------------------
	{svc: content, op: "deleteFont", on: fontOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{204}},
	{svc: content, op: "getProjectServer", on: serverOfA, admits: platformAdmins, other: is(403), member: is(403)},
	{svc: content, op: "updateProjectServer", on: serverOfA, admits: platformAdmins, other: is(403), member: is(403),
		body: func(_ map[string]string, text string) any { return map[string]any{"region": text} }},
	{svc: content, op: "deleteProjectServer", on: serverOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{204}},
	// Unpublished posts are served to no one.
	{svc: content, op: "getBlog", on: draftBlogOfA, admits: usersOrService, other: is(404), member: is(404), ok: []int{404}},
	{svc: content, op: "deleteBlog", on: publishedBlogOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{204}},
	{svc: content, op: "listComments", on: pendingCommentOfA, admits: usersOrService, other: leftOut, member: leftOut,
		query: []string{"blog_id"}},
	// Anyone may comment on a live post or template, and reply to a comment on it (ADR 0039).
	{svc: content, op: "createComment", on: pendingCommentOfA, admits: usersOrService, other: may, member: may, ok: []int{201},
		body: func(ids map[string]string, text string) any {
			return map[string]any{"content": text, "blog_id": ids["blog_id"], "parent_comment_id": ids["parent_comment_id"]}
		}},
	{svc: content, op: "approveComment", on: pendingCommentOfA, admits: platformAdmins, other: is(403), member: is(403)},
	{svc: content, op: "rejectComment", on: pendingCommentOfA, admits: platformAdmins, other: is(403), member: is(403)},
	{svc: content, op: "deleteSlide", on: slideOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{204}},
	{svc: content, op: "deleteHomeEvent", on: homeEventOfA, admits: platformAdmins, other: is(403), member: is(403), ok: []int{204}},
	// Public settings are public; the private part must never be in them.
	{svc: content, op: "getPublicSettings", on: settingsOfA, admits: usersOrService, other: leftOut, member: leftOut},
	{svc: content, op: "getSettings", on: settingsOfA, admits: platformAdmins, other: is(403), member: is(403)},
	{svc: content, op: "putSettings", on: settingsOfA, admits: platformAdmins, other: is(403), member: is(403),
		body: func(_ map[string]string, text string) any {
			return map[string]any{"public": map[string]any{"greeting": text}, "private": map[string]any{"note": text}}
		}},

	// --- agentteam-svc: organizations, members, structure -------------------------------------
	{svc: agentteam, op: "upsertOrganization", on: orgOfA, admits: users, other: is(403), member: is(403),
		body: func(ids map[string]string, text string) any {
			return map[string]any{"organizationId": ids["organizationId"], "name": text}
		}},
	{svc: agentteam, op: "listMembers", on: orgOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "createInvitation", on: orgOfA, admits: users, other: is(403), member: is(403),
		body: func(ids map[string]string, _ string) any {
			return map[string]any{"organizationId": ids["organizationId"], "role": "Owner"}
		}},
	{svc: agentteam, op: "listInvitations", on: orgOfA, admits: users, other: is(403), member: is(403)},
	{svc: agentteam, op: "createDivision", on: divisionOfA, admits: users, other: is(403), member: is(403),
		body: func(ids map[string]string, text string) any {
			return map[string]any{"organizationId": ids["organizationId"], "name": text}
		}},
	{svc: agentteam, op: "listDivisions", on: divisionOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "createProduct", on: divisionOfA, admits: users, other: is(403), member: is(403),
		also: []attempt{strangerWith("organizationId")(is(400))},
		body: func(ids map[string]string, text string) any {
			return map[string]any{"organizationId": ids["organizationId"], "name": text, "divisionId": ids["divisionId"]}
		}},
	{svc: agentteam, op: "listProducts", on: productOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "getProductIdentity", on: productOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "putProductIdentity", on: productOfA, admits: users, other: is(403), member: is(403),
		body: func(_ map[string]string, text string) any { return map[string]any{"identity": text} }},
	{svc: agentteam, op: "createTeam", on: productOfA, admits: users, other: is(403), member: is(403),
		also: []attempt{strangerWith("organizationId")(is(400))},
		body: func(ids map[string]string, text string) any {
			return map[string]any{"organizationId": ids["organizationId"], "name": text, "productId": ids["productId"]}
		}},
	{svc: agentteam, op: "listTeams", on: teamOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "getPerformance", on: teamOfA, admits: users, other: is(403), member: is(403),
		also: []attempt{strangerWith("organizationId")(is(404))}},
	{svc: agentteam, op: "listAudit", on: orgOfA, admits: users, other: is(403), member: is(403)},
	{svc: agentteam, op: "getAnalytics", on: teamOfA, admits: users, other: is(403), member: is(403),
		also: []attempt{strangerWith("organizationId")(is(404))}},

	// --- agentteam-svc: the board, seats and agents -------------------------------------------
	{svc: agentteam, op: "createTask", on: teamOfA, admits: users, other: is(403), member: may,
		body: func(ids map[string]string, text string) any {
			return map[string]any{"teamId": ids["teamId"], "title": text}
		}},
	{svc: agentteam, op: "getBoard", on: taskOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "moveTask", on: taskOfA, admits: users, other: is(403), member: may,
		body: func(_ map[string]string, _ string) any { return map[string]any{"status": "Done"} },
		kept: keptHolding(`"status":"Backlog","tasks":[{`)},
	{svc: agentteam, op: "assignTask", on: taskOfA, admits: users, other: is(403), member: may,
		also: []attempt{ownerWith("memberId")(is(400))},
		body: func(ids map[string]string, _ string) any { return map[string]any{"memberId": ids["memberId"]} },
		kept: keptHolding(`"assigneeId":null`)},
	{svc: agentteam, op: "createSeat", on: teamOfA, admits: users, other: is(403), member: is(403),
		body: func(ids map[string]string, text string) any {
			return map[string]any{"teamId": ids["teamId"], "roleName": text}
		}},
	{svc: agentteam, op: "listSeats", on: seatOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "configureAgent", on: agentOfA, admits: users, other: is(403), member: is(403),
		also: []attempt{strangerWith("id")(is(400))},
		body: func(ids map[string]string, text string) any {
			return map[string]any{"name": text, "apiConfigId": ids["apiConfigId"], "fallbackApiConfigId": ids["fallbackApiConfigId"],
				"mcpServerIds": list(ids["mcpServerIds"])}
		}},
	{svc: agentteam, op: "getAgent", on: agentOfA, admits: users, other: is(403), member: may},

	// --- agentteam-svc: runs and memory -------------------------------------------------------
	{svc: agentteam, op: "createRun", on: runPartsOfA, admits: users, other: is(403), member: may,
		also: []attempt{strangerWith("seatId")(is(400)), strangerWith("workItemId")(is(403))},
		body: func(ids map[string]string, _ string) any {
			return map[string]any{"seatId": ids["seatId"], "workItemId": ids["workItemId"]}
		},
		kept: keptExactly("[]")},
	{svc: agentteam, op: "listRuns", on: runOfA, admits: users, other: is(403), member: may, query: []string{"seatId"}},
	{svc: agentteam, op: "getRun", on: runOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "listRunSteps", on: runOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "streamRunEvents", on: endedRunOfA, admits: users, other: is(403), member: may, query: []string{}},
	{svc: agentteam, op: "listApprovals", on: orgOfA, admits: users, other: is(403), member: may},
	// A call id that names no waiting call: the owner is answered 404 (or 409 once the run has
	// ended), after the capability check that refuses everyone else.
	{svc: agentteam, op: "approveToolCall", on: endedRunOfA, admits: users, other: is(403), member: may, ok: []int{404, 409},
		kept: func(f *fixture, _ string) {
			_, body := f.read()
			Expect(decode(body)["status"]).To(BeElementOf("Cancelled", "Failed"))
		}},
	{svc: agentteam, op: "rejectToolCall", on: endedRunOfA, admits: users, other: is(403), member: may, ok: []int{404, 409},
		kept: func(f *fixture, _ string) {
			_, body := f.read()
			Expect(decode(body)["status"]).To(BeElementOf("Cancelled", "Failed"))
		}},
	{svc: agentteam, op: "cancelRun", on: runOfA, admits: users, other: is(403), member: may, ok: []int{200, 409},
		kept: func(f *fixture, _ string) {
			_, body := f.read()
			Expect(decode(body)["status"]).NotTo(Equal("Cancelled"))
		}},
	{svc: agentteam, op: "approveRun", on: runOfA, admits: users, other: is(403), member: may, ok: []int{409},
		body: func(_ map[string]string, text string) any { return map[string]any{"editedOutput": text} }},
	{svc: agentteam, op: "createMemoryEntry", on: teamOfA, admits: users, other: is(403), member: may,
		body: func(ids map[string]string, text string) any {
			return map[string]any{"teamId": ids["teamId"], "kind": "Note", "content": text}
		}},
	{svc: agentteam, op: "listMemoryEntries", on: memoryEntryOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "deleteMemoryEntry", on: memoryEntryOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "searchMemory", on: memoryEntryOfA, admits: users, other: is(403), member: may, params: map[string]string{"q": "memory"}},

	// --- agentteam-svc: model connections and MCP servers (owner-level) -----------------------
	{svc: agentteam, op: "createModelConnection", on: modelConnectionOfA, admits: users, other: is(403), member: is(403),
		body: func(ids map[string]string, text string) any {
			return map[string]any{"organizationId": ids["organizationId"], "name": text, "baseUrl": "http://127.0.0.1:9/v1", "model": "m", "apiKey": "sk-" + text}
		}},
	{svc: agentteam, op: "listModelConnections", on: modelConnectionOfA, admits: users, other: is(403), member: is(403)},
	{svc: agentteam, op: "deleteModelConnection", on: modelConnectionOfA, admits: users, other: is(403), member: is(403)},
	{svc: agentteam, op: "createMcpServer", on: mcpServerOfA, admits: users, other: is(403), member: is(403),
		body: func(ids map[string]string, text string) any {
			return map[string]any{"organizationId": ids["organizationId"], "name": text, "url": "http://127.0.0.1:9/mcp"}
		}},
	{svc: agentteam, op: "listMcpServers", on: mcpServerOfA, admits: users, other: is(403), member: is(403)},
	{svc: agentteam, op: "deleteMcpServer", on: mcpServerOfA, admits: users, other: is(403), member: is(403)},
	{svc: agentteam, op: "testMcpServer", on: mcpServerOfA, admits: users, other: is(403), member: is(403)},

	// --- agentteam-svc: the skill library -----------------------------------------------------
	{svc: agentteam, op: "listSkills", on: skillOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "getSkillVersions", on: skillOfA, admits: users, other: is(403), member: may,
		also: []attempt{strangerWith("organizationId")(is(404))}},
	{svc: agentteam, op: "authorSkill", on: skillOfA, admits: users, other: is(403), member: is(403),
		body: func(ids map[string]string, text string) any {
			return map[string]any{"organizationId": ids["organizationId"], "skillKey": "k" + marker(), "name": text, "version": "1", "body": text}
		}},
	{svc: agentteam, op: "skillMarketplace", on: listedSkillOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "installSkill", on: skillOfA, admits: users, other: is(403), member: is(403), ok: []int{400},
		also: []attempt{strangerWith("organizationId")(is(404))},
		body: func(ids map[string]string, _ string) any {
			return map[string]any{"organizationId": ids["organizationId"], "skillId": ids["skillId"]}
		}},
	{svc: agentteam, op: "forkSkill", on: skillOfA, admits: users, other: is(403), member: is(403), ok: []int{409},
		also: []attempt{strangerWith("organizationId")(is(404))},
		body: versionBody},
	{svc: agentteam, op: "publishSkill", on: skillOfA, admits: users, other: is(403), member: is(403),
		also: []attempt{strangerWith("organizationId")(is(404))},
		body: versionBody, kept: keptHolding(`"visibility":"PrivateToOrg"`)},
	{svc: agentteam, op: "unpublishSkill", on: listedSkillOfA, admits: users, other: is(403), member: is(403),
		also: []attempt{strangerWith("organizationId")(is(404))},
		body: versionBody, kept: keptHolding(`"visibility":"Public"`)},

	// --- agentteam-svc: agent profiles (managed with ConfigureAgents) -------------------------
	{svc: agentteam, op: "uploadAgentProfile", on: agentProfileOfA, admits: users, other: is(403), member: is(403),
		body: func(ids map[string]string, text string) any {
			return map[string]any{"organizationId": ids["organizationId"], "content": profileDoc("profileKey", "k"+marker(), text)}
		}},
	{svc: agentteam, op: "listAgentProfiles", on: agentProfileOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "getAgentProfileVersions", on: agentProfileOfA, admits: users, other: is(403), member: may,
		also: []attempt{strangerWith("organizationId")(is(404))}},
	{svc: agentteam, op: "agentProfileMarketplace", on: listedAgentProfileOfA, admits: users, other: is(403), member: may},
	{svc: agentteam, op: "installAgentProfile", on: agentProfileOfA, admits: users, other: is(403), member: is(403), ok: []int{400},
		also: []attempt{strangerWith("organizationId")(is(404))},
		body: func(ids map[string]string, _ string) any {
			return map[string]any{"organizationId": ids["organizationId"], "profileId": ids["profileId"]}
		}},
	{svc: agentteam, op: "forkAgentProfile", on: agentProfileOfA, admits: users, other: is(403), member: is(403), ok: []int{409},
		also: []attempt{strangerWith("organizationId")(is(404))},
		body: versionBody},
	{svc: agentteam, op: "publishAgentProfile", on: agentProfileOfA, admits: users, other: is(403), member: is(403),
		also: []attempt{strangerWith("organizationId")(is(404))},
		body: versionBody, kept: keptHolding(`"visibility":"PrivateToOrg"`)},
	{svc: agentteam, op: "unpublishAgentProfile", on: listedAgentProfileOfA, admits: users, other: is(403), member: is(403),
		also: []attempt{strangerWith("organizationId")(is(404))},
		body: versionBody, kept: keptHolding(`"visibility":"Public"`)},

	// --- agentteam-svc: product profiles (every operation owner-level) ------------------------
	{svc: agentteam, op: "uploadProductProfile", on: productProfileOfA, admits: users, other: is(403), member: is(403),
		body: func(ids map[string]string, text string) any {
			return map[string]any{"organizationId": ids["organizationId"], "content": profileDoc("profileKey", "k"+marker(), text)}
		}},
	{svc: agentteam, op: "listProductProfiles", on: productProfileOfA, admits: users, other: is(403), member: is(403)},
	{svc: agentteam, op: "getProductProfileVersions", on: productProfileOfA, admits: users, other: is(403), member: is(403),
		also: []attempt{strangerWith("organizationId")(is(404))}},
	{svc: agentteam, op: "productProfileMarketplace", on: listedProductProfileOfA, admits: users, other: is(403), member: is(403)},
	{svc: agentteam, op: "installProductProfile", on: productProfileOfA, admits: users, other: is(403), member: is(403), ok: []int{400},
		also: []attempt{strangerWith("organizationId")(is(404))},
		body: func(ids map[string]string, _ string) any {
			return map[string]any{"organizationId": ids["organizationId"], "profileId": ids["profileId"]}
		}},
	{svc: agentteam, op: "forkProductProfile", on: productProfileOfA, admits: users, other: is(403), member: is(403), ok: []int{409},
		also: []attempt{strangerWith("organizationId")(is(404))},
		body: versionBody},
	{svc: agentteam, op: "publishProductProfile", on: productProfileOfA, admits: users, other: is(403), member: is(403),
		also: []attempt{strangerWith("organizationId")(is(404))},
		body: versionBody, kept: keptHolding(`"visibility":"PrivateToOrg"`)},
	{svc: agentteam, op: "unpublishProductProfile", on: listedProductProfileOfA, admits: users, other: is(403), member: is(403),
		also: []attempt{strangerWith("organizationId")(is(404))},
		body: versionBody, kept: keptHolding(`"visibility":"Public"`)},
	{svc: agentteam, op: "applyProductProfile", on: productProfileOfA, admits: users, other: is(403), member: is(403),
		also: []attempt{strangerWith("organizationId")(is(404)), strangerWith("organizationId", "key")(is(404))},
		body: func(ids map[string]string, _ string) any {
			return map[string]any{"organizationId": ids["organizationId"], "version": ids["version"], "productId": ids["productId"]}
		}},
}

// versionBody names the organization and the version of a library item.
func versionBody(ids map[string]string, _ string) any {
	return map[string]any{"organizationId": ids["organizationId"], "version": ids["version"]}
}
