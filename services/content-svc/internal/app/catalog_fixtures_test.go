package app_test

import (
	"fmt"
	"net/http"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Builders for the catalog specs: they seed through the API, as an administrator would.

type catJSON = map[string]any

func catAdmin() string { return tokens.UserToken(uuid.NewString(), uuid.NewString(), true) }

func catUser() string { return tokens.UserToken(uuid.NewString(), uuid.NewString(), false) }

// catCreate posts body as an administrator and answers the created record.
func catCreate(path string, body any) catJSON {
	GinkgoHelper()
	r := client.Do("POST", path, catAdmin(), body)
	Expect(r.Status).To(Equal(http.StatusCreated), string(r.Body))
	var out catJSON
	r.JSON(&out)
	return out
}

// catGet reads path with tok and answers the decoded body, expecting 200.
func catGet(path, tok string) catJSON {
	GinkgoHelper()
	r := client.Do("GET", path, tok, nil)
	Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
	var out catJSON
	r.JSON(&out)
	return out
}

func catNoContent(method, path string, body any) {
	GinkgoHelper()
	r := client.Do(method, path, catAdmin(), body)
	Expect(r.Status).To(Equal(http.StatusNoContent), string(r.Body))
}

var catSeq int

// catContainer creates a container with a unique slug, overriding fields with extra.
func catContainer(extra catJSON) catJSON {
	GinkgoHelper()
	catSeq++
	body := catJSON{"slug": fmt.Sprintf("tpl-%d", catSeq), "name": fmt.Sprintf("Template %d", catSeq), "primary_mode": "video"}
	for k, v := range extra {
		body[k] = v
	}
	return catCreate("/v1/containers", body)
}

// catPublished creates and publishes a container.
func catPublished(extra catJSON) catJSON {
	GinkgoHelper()
	c := catContainer(extra)
	catNoContent("POST", "/v1/containers/"+c["id"].(string)+"/publish", nil)
	return c
}

// catProject creates a project of a container with the given size.
func catProject(containerID string, w, h int, extra catJSON) catJSON {
	GinkgoHelper()
	body := catJSON{"container_id": containerID, "name": fmt.Sprintf("%dx%d", w, h), "original_width": w,
		"original_height": h, "project_duration_sec": 30, "choose_mode": "scenes"}
	for k, v := range extra {
		body[k] = v
	}
	return catCreate("/v1/projects", body)
}

func catID(m catJSON) string { return m["id"].(string) }

// catCards decodes a list answer's cards into their container ids.
func catCardIDs(body catJSON) []string {
	data := body["data"].([]any)
	ids := make([]string, len(data))
	for i, d := range data {
		ids[i] = d.(map[string]any)["container_id"].(string)
	}
	return ids
}
